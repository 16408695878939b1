#include "tests/page/page_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "tests/page/page_fixture.h"

namespace hubwatch::page::testing {

const std::string& PageDb() {
  static const std::string path = [] {
    const char* env = std::getenv("HUBWATCH_PAGE_FIXTURE_DB");
    if (env && std::filesystem::exists(env)) return std::string(env);
    const std::string built = std::filesystem::temp_directory_path().string() +
                              "/hubwatch_page_fixture_" + std::to_string(::getpid()) + ".db";
    if (Status s = BuildPageDb(built); !s.ok()) {
      std::fprintf(stderr, "building the page fixture database: %s\n", s.error().message.c_str());
      std::abort();
    }
    std::atexit([] {
      const std::string p = std::filesystem::temp_directory_path().string() +
                            "/hubwatch_page_fixture_" + std::to_string(::getpid()) + ".db";
      for (const char* suffix : {"", "-wal", "-shm"}) std::remove((p + suffix).c_str());
    });
    return built;
  }();
  return path;
}

BuiltPage BuildPage(store::Store& store, const std::string& repo, const std::string& sha) {
  BuiltPage p;
  auto r = store.repos().GetRepo(repo);
  if (r.ok() && r->has_value()) p.repo = **r;
  auto h = LoadHistory(store, repo, 200);
  if (h.ok()) p.history = std::move(h).value();
  p.sha = sha.empty() && !p.history.empty() ? p.history.front().revision.sha : sha;
  if (!p.sha.empty()) {
    auto e = EstimateRevision(store, repo, p.sha);
    if (e.ok()) p.estimate = std::move(e).value();
  }
  auto pins = store::PinStatuses(store, p.repo);
  p.doc = BuildModelPage({.repo = &p.repo,
                          .sha = p.sha,
                          .estimate = &p.estimate,
                          .history = &p.history,
                          .pins = pins.ok() ? *pins : std::vector<store::PinStatus>{},
                          .base_url = "http://127.0.0.1:8437"});
  return p;
}

}  // namespace hubwatch::page::testing
