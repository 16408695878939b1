// page_render_bench: the server CPU of one model page, measured in-process: the store reads,
// the estimate, the document and the HTML, for google/gemma-2-9b-it with 18 synthetic
// revisions on top of its 2 (20 in all). Two cases: cold (the estimate computed, as for the
// first request of a revision) and warm (the estimate finished from the basis in the server's
// BasisCache, as for every later one). Prints the mean and the best per page over the runs, and the
// page's size. Not a test (BENCHMARKS.md "The model page").
//
// usage: page_render_bench [ITERATIONS]

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "daemon/page/basis_cache.h"
#include "daemon/page/render.h"
#include "tests/page/page_env.h"
#include "tests/page/page_fixture.h"

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hubwatch;
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  const std::string db = "/tmp/hubwatch_page_bench_" + std::to_string(::getpid()) + ".db";
  Status s = page::testing::BuildPageDb(db);
  if (s.ok()) s = page::testing::AddSyntheticHistory(db, page::testing::kGemma, 18);
  if (!s.ok()) {
    std::fprintf(stderr, "page_render_bench: %s\n", s.error().message.c_str());
    return 1;
  }
  auto store = store::Store::Open(db);
  if (!store.ok()) return 1;
  size_t bytes = 0, revisions = 0;
  double total = 0, best = 1e9;
  const auto measure = [&](const auto& build_html) {
    total = 0;
    best = 1e9;
    for (int i = 0; i < iterations; ++i) {
      const double start = CpuSeconds();
      const std::string html = build_html();
      const double took = CpuSeconds() - start;
      total += took;
      best = std::min(best, took);
      bytes = html.size();
    }
  };
  measure([&] {
    page::testing::BuiltPage p = page::testing::BuildPage(**store, page::testing::kGemma);
    revisions = p.history.size();
    return page::RenderHtml(p.doc);
  });
  std::printf("model page google/gemma-2-9b-it: %zu revisions, %zu bytes\n", revisions, bytes);
  std::printf("cold (estimate computed): mean %.3f ms, best %.3f ms of CPU over %d pages\n",
              1e3 * total / iterations, 1e3 * best, iterations);
  std::shared_ptr<page::BasisCache> cache = page::MakeBasisCache(64 << 20);
  measure([&] {  // what routes_page.cc does on an ETag miss
    const std::string repo = page::testing::kGemma;
    auto record = (*store)->repos().GetRepo(repo);
    auto history = page::LoadHistory(**store, repo, 200);
    if (!record.ok() || !*record || !history.ok() || history->empty()) std::abort();
    const std::string sha = history->front().revision.sha;
    auto basis = cache->Get(page::BasisKey(repo, sha),
                            [&] { return page::PrepareRevision(**store, repo, sha); });
    if (!basis.ok()) std::abort();
    const page::RevisionEstimate estimate = page::FinishRevision(**basis);
    const page::Document doc = page::BuildModelPage({.repo = &**record,
                                                     .sha = sha,
                                                     .estimate = &estimate,
                                                     .history = &*history,
                                                     .base_url = "http://127.0.0.1:8437"});
    return page::RenderHtml(doc);
  });
  std::printf("warm (basis cached): mean %.3f ms, best %.3f ms of CPU over %d pages\n",
              1e3 * total / iterations, 1e3 * best, iterations);
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  return 0;
}
