// Ingest benchmarks (method and results in BENCHMARKS.md):
//   BM_IngestNewGemmaRevision   one new google/gemma-2-9b-it revision on top of the previous one:
//                               4 re-uploaded shards (4 header range reads), a 256k-token
//                               tokenizer.json (~17 MB), a config change; refs, commits, tree,
//                               file fetches, every diff engine, the estimate, advisories, commit.
//   BM_RevisionsBlobsCached     200 revisions whose files are all in the store already (content
//                               alternates): what a revision costs once nothing is downloaded.
// fakehub runs in-process on loopback; the store is a SQLite file in /tmp.

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "tests/fakehub/fakehub.h"
#include "tests/fakehub/fixture_loader.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {
namespace {

constexpr const char kToken[] = "hf_bench";

std::string BigTokenizer(int tokens) {
  std::string vocab, merges;
  vocab.reserve(static_cast<size_t>(tokens) * 24);
  for (int i = 0; i < tokens; ++i) {
    vocab +=
        (i ? ",\"" : "\"") + std::string("tok_") + std::to_string(i) + "\":" + std::to_string(i);
    if (i > 0 && i < tokens - 1) {
      merges += (i > 1 ? ",\"" : "\"") + std::string("tok_") + std::to_string(i) + " tok_" +
                std::to_string(i + 1) + "\"";
    }
  }
  return R"({"version":"1.0","truncation":null,"padding":null,"added_tokens":[],)"
         R"("normalizer":null,"pre_tokenizer":{"type":"ByteLevel"},"post_processor":null,)"
         R"("decoder":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{)" +
         vocab + "},\"merges\":[" + merges + "]}}";
}

// bench/gemma-2-9b-it: the fixture's last state, then one revision that re-uploads the four
// shards (new content, same tensors), swaps in a 256k-token tokenizer and edits config.json.
fakehub::Repo NextGemmaRepo() {
  const std::string dir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub/google/gemma-2-9b-it";
  auto fixture = fakehub::LoadFixtureRepo(dir + "/repo.json");
  if (!fixture.ok()) std::abort();
  const fakehub::FileMap& files =
      *fixture->commits[static_cast<size_t>(fixture->main_history.back())].files;
  fakehub::Repo meta;
  meta.id = "bench/gemma-2-9b-it";
  meta.created_at = "2024-06-27T00:00:00.000Z";
  fakehub::RepoBuilder b(std::move(meta));
  fakehub::RepoBuilder::CommitSpec first;
  first.title = "upload";
  first.date = "2024-06-27T00:00:00.000Z";
  for (const auto& [path, blob] : files) first.add[path] = blob;
  if (!b.AddCommit(std::move(first)).ok()) std::abort();

  fakehub::RepoBuilder::CommitSpec next;
  next.title = "new weights, new tokenizer";
  next.date = "2024-07-01T00:00:00.000Z";
  int shard = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/weights/v1")) {
    auto m = fakehub::LoadSafetensorsManifest(entry.path());
    if (!m.ok()) std::abort();
    m->seed += 1000;
    m->sha256 = std::string(63, 'e') + static_cast<char>('0' + shard++);
    auto blob = fakehub::MakeSafetensorsBlob(*m);
    if (!blob.ok()) std::abort();
    std::string name = entry.path().filename().string();
    name.resize(name.size() - std::string(".json").size());
    next.change[name] = *blob;
  }
  next.change["tokenizer.json"] = fakehub::MakeInlineBlob(BigTokenizer(256000));
  std::string config = files.at("config.json")->inline_content;
  config.replace(config.find("\"rope_theta\": 10000.0"), 21, "\"rope_theta\": 50000.0");
  next.change["config.json"] = fakehub::MakeInlineBlob(config);
  if (!b.AddCommit(std::move(next)).ok()) std::abort();
  return std::move(b).Build();
}

fakehub::Repo ManyRevisionsRepo(int revisions) {
  fakehub::Repo meta;
  meta.id = "bench/many-revisions";
  meta.created_at = "2024-01-01T00:00:00.000Z";
  fakehub::RepoBuilder b(std::move(meta));
  const auto a = fakehub::MakeInlineBlob(R"({"model_type": "llama", "rope_theta": 10000.0})");
  const auto c = fakehub::MakeInlineBlob(R"({"model_type": "llama", "rope_theta": 20000.0})");
  for (int i = 0; i < revisions; ++i) {
    fakehub::RepoBuilder::CommitSpec spec;
    spec.title = "revision " + std::to_string(i);
    spec.date = fakehub::FormatIsoTime(1704067200 + i * 60);
    (i == 0 ? spec.add : spec.change)["config.json"] = i % 2 ? c : a;
    if (!b.AddCommit(std::move(spec)).ok()) std::abort();
  }
  return std::move(b).Build();
}

struct Env {
  std::unique_ptr<fakehub::FakeHub> hub;
  boost::asio::io_context io;
  std::unique_ptr<hub::HubStack> stack;

  Env() {
    fakehub::FakeHubOptions options;
    options.users = {{kToken, "bench", true}};
    options.extra_repos = {NextGemmaRepo(), ManyRevisionsRepo(200)};
    options.mode = fakehub::Mode::kReplay;
    options.replay_start = *fakehub::ParseIsoTime("2024-06-28T00:00:00.000Z");
    options.api_quota = 1'000'000;
    options.resolvers_quota = 1'000'000;
    hub = std::move(fakehub::FakeHub::Start(std::move(options))).value();
    FreshClient();
  }

  // A new client: an empty ETag cache, so nothing is answered by a 304.
  void FreshClient() {
    stack.reset();
    hub::HubClientOptions client;
    client.settings.endpoint = hub->endpoint();
    client.settings.token = hub::Secret(kToken);
    stack = std::make_unique<hub::HubStack>(io, client);
  }

  PollReport Poll(store::Store& store, const std::string& repo) {
    Poller poller(stack->client(), store, {});
    std::optional<PollReport> report;
    poller.Poll(repo, [&](PollReport r) { report = std::move(r); });
    while (!report) {
      io.restart();
      io.run_one();
    }
    if (!report->ok) std::abort();
    return *report;
  }
};

Env& GetEnv() {
  static Env env;
  return env;
}

std::unique_ptr<store::Store> Open(const std::string& path) {
  auto s = store::Store::Open(path);
  if (!s.ok()) std::abort();
  return std::move(s).value();
}

void Remove(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

void CopyFile(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

void BM_IngestNewGemmaRevision(benchmark::State& state) {
  Env& env = GetEnv();
  const std::string base = "/tmp/hubwatch_bench_base.db", run = "/tmp/hubwatch_bench_run.db";
  // The replay clock starts between the two commits: the first poll ingests the previous
  // revision only. That store is the starting point of every iteration.
  Remove(base);
  {
    auto store = Open(base);
    if (!store->repos().AddRepo({.id = "bench/gemma-2-9b-it", .refs = {"main"}}).ok())
      std::abort();
    if (env.Poll(*store, "bench/gemma-2-9b-it").revisions != 1) std::abort();
  }
  env.hub->AdvanceReplayClock(std::chrono::hours(24 * 7));
  PollReport last;
  for (auto _ : state) {
    state.PauseTiming();
    Remove(run);
    CopyFile(base, run);
    auto store = Open(run);
    env.FreshClient();
    state.ResumeTiming();
    last = env.Poll(*store, "bench/gemma-2-9b-it");
  }
  if (last.revisions != 1) std::abort();
  state.counters["requests"] = last.stats.requests;
  state.counters["MB_received"] = static_cast<double>(last.stats.bytes_received) / 1e6;
  Remove(run);
  Remove(base);
}

void BM_RevisionsBlobsCached(benchmark::State& state) {
  Env& env = GetEnv();
  const std::string path = "/tmp/hubwatch_bench_cached.db";
  PollReport last;
  for (auto _ : state) {
    state.PauseTiming();
    Remove(path);
    auto store = Open(path);
    if (!store->repos().AddRepo({.id = "bench/many-revisions", .refs = {"main"}}).ok())
      std::abort();
    state.ResumeTiming();
    last = env.Poll(*store, "bench/many-revisions");
  }
  state.SetItemsProcessed(state.iterations() * last.revisions);
  state.counters["requests_per_revision"] =
      static_cast<double>(last.stats.requests) / last.revisions;
  Remove(path);
}

BENCHMARK(BM_IngestNewGemmaRevision)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_RevisionsBlobsCached)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace hubwatch::pipeline

BENCHMARK_MAIN();
