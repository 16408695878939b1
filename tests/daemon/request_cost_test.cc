// What one unauthenticated request may cost the running daemon (issue 28; SECURITY.md "What a
// request may cost"): the real `hubwatch serve`, every route that takes a body or a list sent the
// largest input its limits allow in its most expensive shape, and the daemon's own CPU time
// (/proc/PID/stat) and peak resident memory (VmHWM, reset before each request through
// /proc/PID/clear_refs) measured around it. Each must stay within 0.25 s of CPU and 32 MiB of
// peak memory above what the daemon held before, and a request's memory must be given back.
//
// Sanitized builds run the same requests with the limits scaled (AddressSanitizer at -O0: ~10x
// the CPU, shadow memory and redzones on every allocation); the unscaled figures are measured on
// a RelWithDebInfo build (SECURITY.md gives them with the command).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "estimator/formats/safetensors_header.h"
#include "tests/api/http_client.h"
#include "tests/daemon/scratch_dir.h"
#include "tests/daemon/wait_until.h"
#include "tracker/store/store.h"

namespace hubwatch::testing {
namespace {

using api::testing::Headers;
using api::testing::HttpResponse;
using api::testing::Request;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr double kMaxCpuSeconds = 0.25 * (kSanitized ? 10 : 1);
constexpr double kMaxPeakMiB = 32 * (kSanitized ? 3 : 1);
// What may stay resident after a request: page-cache entries, allocator slack.
constexpr double kMaxKeptMiB = 4;

// The limits of the configuration below (daemon/config/config.h defaults).
constexpr size_t kMaxBodyBytes = 4 << 20;
constexpr size_t kMaxPlanBodyBytes = 1 << 20;
constexpr size_t kMaxHubWebhookBodyBytes = 1 << 20;
constexpr size_t kMaxTargetBytes = 15 << 10;  // the request line, under the 16 KiB header cap

std::string Binary() { return HUBWATCH_BINARY; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string PercentEncode(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3);
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

// A real Llama-3-8B config.json, then filler members up to `bytes`: the shape that costs the
// JSON parser most per byte (a map node and a key per member).
std::string ConfigOfSize(size_t bytes) {
  std::string config =
      R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,)"
      R"( "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,)"
      R"( "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192,)"
      R"( "torch_dtype": "bfloat16")";
  for (int i = 0; config.size() + 16 < bytes; ++i) config += ",\"" + std::to_string(i) + "\":0";
  return config + "}";
}

// The same config with an eos_token_id list filling `bytes`.
std::string ConfigWithEosList(size_t bytes) {
  std::string config = ConfigOfSize(0);
  config.pop_back();
  config += ", \"eos_token_id\": [0";
  while (config.size() + 16 < bytes) config += ",128001";
  return config + "]}";
}

// A JSON array of zeros filling `bytes`: the shape with the most values per byte.
std::string ZerosArray(size_t bytes) {
  std::string out = "[";
  while (out.size() + 3 < bytes) out += "0,";
  return out + "0]";
}

// A safetensors header of one-byte tensors, each under a module of its own, filling `bytes`: the
// most tensors and graph nodes the body holds. With `shards`, each tensor is a shard of its own
// in the {"safetensors_headers": [...]} envelope.
std::string HeaderOfSize(size_t bytes, bool shards) {
  std::string out = shards ? R"({"safetensors_headers": [)" : "{";
  for (int i = 0; out.size() + 120 < bytes; ++i) {
    const std::string offsets = shards ? "0,1" : std::to_string(i) + "," + std::to_string(i + 1);
    out += std::string(i ? "," : "") + (shards ? "{" : "") + "\"model.layers." + std::to_string(i) +
           ".m.weight\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[" + offsets + "]}" +
           (shards ? "}" : "");
  }
  return out + (shards ? "]}" : "}");
}

struct Attack {
  std::string name;
  std::string method;
  std::string target;
  std::string body;
  Headers headers;
};

struct ProcessSample {
  double cpu_s = 0;
  double rss_mib = 0;
  double hwm_mib = 0;
};

class RequestCostTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    Write("admin.token", "admin-token-for-the-cost-test-0123456789");
    Write("hub.secret", "hub-webhook-secret-for-the-cost-test");
    const std::string config = Write(
        "hubwatch.json",
        R"({"store": "hubwatch.db", "hub": {"endpoint": "http://127.0.0.1:9",)"
        R"( "webhook_secret_file": "hub.secret"}, "admin_token_file": "admin.token",)"
        R"( "listen": "127.0.0.1:0", "poll": {"interval_s": 3600},)"
        R"( "repos": [{"id": "meta-llama/Meta-Llama-3-8B"}]})");
    PrepareStore();
    const std::string err = (dir_ / "stderr").string();
    std::fflush(stdout);
    std::fflush(stderr);
    pid_ = fork();
    if (pid_ == 0) {
      // Under AddressSanitizer, freed memory waits in a quarantine (256 MB by default) before
      // reuse, so the peak would follow what a request allocated in all, not what it held.
      if (kSanitized) {
        const char* asan = std::getenv("ASAN_OPTIONS");
        const std::string options = std::string(asan ? asan : "") + ":quarantine_size_mb=4";
        setenv("ASAN_OPTIONS", options.c_str(), 1);
      }
      std::freopen(err.c_str(), "w", stderr);
      std::freopen("/dev/null", "w", stdout);
      const std::string binary = Binary();
      execl(binary.c_str(), binary.c_str(), "serve", "--config", config.c_str(), nullptr);
      _exit(127);
    }
    // The log's ready line names the port: "... API on 127.0.0.1:PORT".
    hubwatch::testing::WaitUntil([&] {
      const std::string log = Slurp(err);
      if (const size_t at = log.find("API on 127.0.0.1:"); at != std::string::npos) {
        port_ = static_cast<uint16_t>(std::atoi(log.c_str() + at + 17));
      }
      return port_ != 0;
    });
    ASSERT_NE(port_, 0) << Slurp(err);
    ASSERT_EQ(Request(port_, "GET", "/healthz").status, 200);
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    ScratchDirTest::TearDown();
  }

  // What the store holds before the daemon starts (a subclass's upstream data).
  virtual void PrepareStore() {}

  ProcessSample Sample() const {
    ProcessSample s;
    const std::string stat = Slurp("/proc/" + std::to_string(pid_) + "/stat");
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    s.cpu_s = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    std::istringstream status(Slurp("/proc/" + std::to_string(pid_) + "/status"));
    for (std::string line; std::getline(status, line);) {
      auto kib = [&](const char* key) { return std::stod(line.substr(std::string(key).size())); };
      if (line.rfind("VmRSS:", 0) == 0) s.rss_mib = kib("VmRSS:") / 1024;
      if (line.rfind("VmHWM:", 0) == 0) s.hwm_mib = kib("VmHWM:") / 1024;
    }
    return s;
  }

  // Resets the daemon's peak RSS to its current RSS ("5" > clear_refs, Linux 4.0+).
  void ResetPeak() const {
    std::ofstream("/proc/" + std::to_string(pid_) + "/clear_refs") << "5";
  }

  // Sends `attack` twice (the first warms what a first request loads once: the page cache, the
  // read pool's statements) and returns the second's cost and the answer.
  struct Cost {
    double cpu_s, peak_mib, kept_mib;
    int status;
  };
  Cost Measure(const Attack& attack) {
    (void)Request(port_, attack.method, attack.target, attack.body, attack.headers);
    ResetPeak();
    const ProcessSample before = Sample();
    const HttpResponse r = Request(port_, attack.method, attack.target, attack.body, attack.headers);
    // The reply is sent before the worker that built it has released the request's memory, and
    // the connection closes after it: wait (up to 2 s) for the resident set to come back.
    ProcessSample after = Sample();
    hubwatch::testing::WaitUntil(
        [&] {
          if (after.rss_mib - before.rss_mib <= kMaxKeptMiB) return true;
          after = Sample();
          return after.rss_mib - before.rss_mib <= kMaxKeptMiB;
        },
        std::chrono::seconds(2));
    return {after.cpu_s - before.cpu_s, after.hwm_mib - before.rss_mib,
            after.rss_mib - before.rss_mib, r.status};
  }

  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

std::vector<Attack> Attacks() {
  const Headers form = {{"Content-Type", "application/x-www-form-urlencoded"}};
  const Headers json = {{"Content-Type", "application/json"}};
  std::vector<Attack> attacks;
  // The paste-a-model form: a config of the most members the form's limit holds; 16 distinct
  // custom cards (the cap) at the longest workload; the cards field at its byte cap; fields.
  std::string cards;
  for (int i = 0; i < 16; ++i) cards += "card" + std::to_string(i) + "=" + std::to_string(8 + i) + ":300:1,";
  const std::string knobs = "&seq=16777216&batch=65536&lora_rank=65536&cards=" + PercentEncode(cards);
  attacks.push_back({"POST /plan, a config of the most members", "POST", "/plan",
                     "config=" + PercentEncode(ConfigOfSize(kMaxPlanBodyBytes - knobs.size())) + knobs,
                     form});
  std::string card_flood;
  while (card_flood.size() < 3 * kMaxPlanBodyBytes) card_flood += "a100-80gb,h100,";
  attacks.push_back({"POST /plan, a million cards", "POST", "/plan",
                     "config=" + PercentEncode(ConfigOfSize(0)) + "&cards=" + card_flood, form});
  std::string fields = "config=%7B%7D";
  while (fields.size() < 3 * kMaxPlanBodyBytes) fields += "&a";
  attacks.push_back({"POST /plan, a million fields", "POST", "/plan", fields, form});
  // The estimator over HTTP: the same shapes, and the longest id list.
  attacks.push_back({"POST /api/v1/plan, a config of the most members", "POST",
                     "/api/v1/plan?seq=16777216&batch=65536&lora_rank=65536&cards=" + PercentEncode(cards),
                     ConfigOfSize(kMaxPlanBodyBytes), json});
  attacks.push_back({"POST /api/v1/plan, an eos_token_id list", "POST", "/api/v1/plan",
                     ConfigWithEosList(kMaxPlanBodyBytes), json});
  attacks.push_back({"POST /api/v1/plan, a header of the most tensors", "POST", "/api/v1/plan",
                     HeaderOfSize(kMaxPlanBodyBytes, false), json});
  attacks.push_back({"POST /api/v1/plan, a shard per tensor", "POST", "/api/v1/plan",
                     HeaderOfSize(kMaxPlanBodyBytes, true), json});
  // osv.dev queries: the most values, the longest string, the largest batch of distinct queries.
  attacks.push_back({"POST /v1/query, values", "POST", "/v1/query", ZerosArray(kMaxBodyBytes), json});
  attacks.push_back({"POST /v1/query, one string", "POST", "/v1/query",
                     R"({"commit": ")" + std::string(kMaxBodyBytes - 16, 'a') + "\"}", json});
  std::string batch = R"({"queries": [)";
  for (int i = 0; i < 1000; ++i) {
    char sha[41];
    std::snprintf(sha, sizeof sha, "%040x", i);
    batch += std::string(i ? "," : "") + R"({"commit": ")" + sha + "\"}";
  }
  attacks.push_back({"POST /v1/querybatch, 1,000 distinct queries", "POST", "/v1/querybatch",
                     batch + "]}", json});
  attacks.push_back({"POST /v1/querybatch, values", "POST", "/v1/querybatch",
                     R"({"queries": )" + ZerosArray(kMaxBodyBytes - 20) + "}", json});
  // Webhooks from "the Hub" without a valid signature, and the admin API without the token.
  attacks.push_back({"POST /api/v1/hub-webhooks, unsigned", "POST", "/api/v1/hub-webhooks",
                     ZerosArray(kMaxHubWebhookBodyBytes), json});
  attacks.push_back({"POST /api/v1/hub-webhooks, a wrong secret", "POST", "/api/v1/hub-webhooks",
                     ZerosArray(kMaxHubWebhookBodyBytes),
                     {{"Content-Type", "application/json"}, {"X-Webhook-Secret", "guess"}}});
  attacks.push_back({"POST /api/v1/repos, no token", "POST", "/api/v1/repos",
                     ZerosArray(kMaxBodyBytes), json});
  attacks.push_back({"POST /api/v1/subscriptions, no token", "POST", "/api/v1/subscriptions",
                     ZerosArray(kMaxBodyBytes), json});
  // Lists in query strings, at the longest request line.
  auto long_query = [](std::string target, const std::string& item) {
    while (target.size() + item.size() < kMaxTargetBytes) target += item;
    return target;
  };
  attacks.push_back({"GET /changes, a long kind list", "GET",
                     long_query("/changes?repo=meta-llama/Meta-Llama-3-8B", "&kind=config"), "", {}});
  attacks.push_back({"GET /api/v1/advisories, a long query", "GET",
                     long_query("/api/v1/advisories?limit=1000", "&repo=meta-llama/Meta-Llama-3-8B"),
                     "", {}});
  attacks.push_back({"GET /index.json, a long query", "GET", long_query("/index.json?", "&q=x"), "",
                     {}});
  attacks.push_back({"GET /api/v1/repos/.../estimate, a long card list", "GET",
                     long_query("/api/v1/repos/meta-llama/Meta-Llama-3-8B/estimate?cards=", "h100,"),
                     "", {}});
  // The paste-a-model form again: a million empty fields, and a config of the character HTML
  // writes longest (`"` as &quot;), which the page must not show back six times over.
  attacks.push_back({"POST /plan, a million empty fields", "POST", "/plan",
                     std::string(kMaxPlanBodyBytes, '&'), form});
  std::string quotes = "config=";
  while (quotes.size() + 3 <= 3 * kMaxPlanBodyBytes + 7) quotes += "%22";
  attacks.push_back({"POST /plan, a config of 1 MiB of quotes", "POST", "/plan", quotes, form});
  return attacks;
}

TEST_F(RequestCostTest, NoUnauthenticatedRequestCostsMoreThanItsShare) {
  for (const Attack& attack : Attacks()) {
    SCOPED_TRACE(attack.name);
    ASSERT_LE(attack.body.size(), kMaxBodyBytes) << "within the body limits";
    const Cost cost = Measure(attack);
    std::printf("%-55s %3d  cpu %.3f s  peak +%.1f MiB  kept %+.1f MiB  (%zu bytes)\n",
                attack.name.c_str(), cost.status, cost.cpu_s, cost.peak_mib, cost.kept_mib,
                attack.body.size() + attack.target.size());
    EXPECT_GT(cost.status, 0) << "the daemon answered";
    EXPECT_NE(cost.status, 500);
    EXPECT_LE(cost.cpu_s, kMaxCpuSeconds);
    EXPECT_LE(cost.peak_mib, kMaxPeakMiB);
    if (!kSanitized) {
      EXPECT_LE(cost.kept_mib, kMaxKeptMiB) << "the request's memory is given back";
    }
  }
  EXPECT_EQ(Request(port_, "GET", "/healthz").status, 200);
}

// Routes whose cost depends on what upstream stored: the model page and a re-estimate for the
// user's workload read the revision's stored config and safetensors headers. Here the head of
// the tracked repo has a checkpoint whose header is the largest the store keeps (25 MB, the
// Hub clients' own limit: about 280,000 tensors; 4 MiB in sanitized builds, where parsing it
// takes 10x longer), against a real Llama-3-8B config. The first request for it is answered at
// once (503, Retry-After: it is prepared apart, once); from then on every request finishes the
// prepared basis within its share, whatever the checkpoint held.
class StoredCheckpointCostTest : public RequestCostTest {
 protected:
  static constexpr const char* kRepo = "meta-llama/Meta-Llama-3-8B";
  static constexpr size_t kHeaderBytes = kSanitized ? (4u << 20) : 25'000'000;

  void PrepareStore() override {
    Result<std::unique_ptr<store::Store>> s = store::Store::Open((dir_ / "hubwatch.db").string());
    ASSERT_TRUE(s.ok()) << s.error().message;
    store::RepoRecord repo;
    repo.id = kRepo;
    repo.refs = {"main"};
    repo.source = store::Source::kConfig;
    ASSERT_TRUE((*s)->repos().AddRepo(repo).ok());
    Result<SafetensorsHeader> header =
        ParseSafetensorsHeader(HeaderOfSize(kHeaderBytes, /*shards=*/false));
    ASSERT_TRUE(header.ok()) << header.error().message;
    store::RevisionIngest in;
    in.revision.repo = kRepo;
    in.revision.sha = std::string(40, 'a');
    in.revision.authored_at = "2024-12-04T10:00:00.000Z";
    in.revision.title = "Upload the checkpoint";
    in.revision.first_seen_at = 1733306400;
    const std::string config_oid(40, 'c'), weights_sha(64, 'e');
    in.manifest = {{.path = "config.json", .git_oid = config_oid, .size = 300},
                   {.path = "model.safetensors",
                    .git_oid = std::string(40, 'd'),
                    .size = kHeaderBytes,
                    .lfs_sha256 = weights_sha,
                    .lfs_size = kHeaderBytes}};
    in.blobs = {{config_oid, ConfigOfSize(0)}};
    in.headers = {{weights_sha, std::move(header).value()}};
    in.ref_heads = {{"main", in.revision.sha}};
    in.estimate = store::EstimateRecord::Unavailable(kRepo, in.revision.sha,
                                                     "recorded at ingest as over the size kept");
    Result<store::IngestOutcome> ingested = (*s)->revisions().Ingest(in);
    ASSERT_TRUE(ingested.ok()) << ingested.error().message;
  }
};

TEST_F(StoredCheckpointCostTest, ThePageAndAReEstimateOfTheLargestStoredCheckpointCostTheirShare) {
  const std::string estimate = std::string("/api/v1/repos/") + kRepo + "/estimate?context=8192";
  const std::string page = std::string("/models/") + kRepo;
  const ProcessSample before = Sample();
  const HttpResponse first = Request(port_, "GET", estimate);
  const ProcessSample after = Sample();
  EXPECT_EQ(first.status, 503) << first.body;
  EXPECT_NE(first.body.find("is being prepared"), std::string::npos) << first.body;
  EXPECT_NE(first.header("retry-after"), "");
  // Not the preparation (which runs on, apart): the answer came before the headers were read.
  EXPECT_LE(after.cpu_s - before.cpu_s, kMaxCpuSeconds) << "the first request did the work";
  const HttpResponse cold_page = Request(port_, "GET", page);
  EXPECT_EQ(cold_page.status, 200);
  ASSERT_TRUE(hubwatch::testing::WaitUntil(
      [&] { return Request(port_, "GET", estimate).status == 200; }, std::chrono::minutes(3)))
      << "the basis was never prepared";
  for (const Attack& attack :
       {Attack{"GET .../estimate?context=8192 of the largest stored checkpoint", "GET", estimate,
               "", {}},
        Attack{"GET .../estimate?seq=16777216&batch=65536 of it", "GET",
               std::string("/api/v1/repos/") + kRepo + "/estimate?seq=16777216&batch=65536", "",
               {}},
        Attack{"GET /models/... of it", "GET", page, "", {}}}) {
    SCOPED_TRACE(attack.name);
    const Cost cost = Measure(attack);
    std::printf("%-55s %3d  cpu %.3f s  peak +%.1f MiB  kept %+.1f MiB\n", attack.name.c_str(),
                cost.status, cost.cpu_s, cost.peak_mib, cost.kept_mib);
    EXPECT_EQ(cost.status, 200);
    EXPECT_LE(cost.cpu_s, kMaxCpuSeconds);
    EXPECT_LE(cost.peak_mib, kMaxPeakMiB);
  }
  // The page shows the estimate now, with the checkpoint's findings counted, not listed whole.
  const HttpResponse warm_page = Request(port_, "GET", page);
  EXPECT_EQ(warm_page.body.find("is being prepared"), std::string::npos);
  EXPECT_LT(warm_page.body.size(), 512u << 10);
}

}  // namespace
}  // namespace hubwatch::testing
