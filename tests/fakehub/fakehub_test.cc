// fakehub on the wire: its endpoints as raw HTTP (through the real curl transport), replay mode,
// the control endpoints, Range/416, the CDN signature, and the executable's ready line.

#include "tests/fakehub/fakehub.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "tests/fakehub/synthetic.h"
#include "tracker/hub/curl_transport.h"

extern char** environ;

namespace hubwatch::fakehub {
namespace {

using hub::HttpMethod;
using hub::HttpRequest;
using hub::HttpResponse;
using nlohmann::json;

class FakeHubWire : public ::testing::Test {
 protected:
  void Start(FakeHubOptions options) {
    options.fixtures_dir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
    auto hub = FakeHub::Start(std::move(options));
    ASSERT_TRUE(hub.ok()) << hub.error().message;
    hub_ = std::move(hub).value();
  }

  HttpResponse Send(HttpRequest request) {
    if (request.url.starts_with("/")) request.url = hub_->endpoint() + request.url;
    std::optional<hub::TransportOutcome> outcome;
    transport_.Start(std::move(request), [&](hub::TransportOutcome o) { outcome = std::move(o); });
    while (!outcome) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(outcome->ok()) << outcome->error->message;
    return outcome->response;
  }
  HttpResponse Get(const std::string& url,
                   std::vector<std::pair<std::string, std::string>> headers = {},
                   HttpMethod method = HttpMethod::kGet) {
    HttpRequest r;
    r.url = url;
    r.method = method;
    for (auto& [k, v] : headers) r.headers.Add(k, v);
    return Send(std::move(r));
  }

  boost::asio::io_context io_;
  hub::CurlTransport transport_{io_};
  std::unique_ptr<FakeHub> hub_;
};

TEST_F(FakeHubWire, EveryResponseCarriesRateLimitHeaders) {
  FakeHubOptions options;
  options.api_quota = 3;
  Start(std::move(options));
  for (int i = 0; i < 4; ++i) {
    HttpResponse r = Get("/api/models/google/gemma-7b-it/refs");
    EXPECT_TRUE(std::string(r.headers.Get("RateLimit").value_or(""))
                    .starts_with("\"api\";r=" + std::to_string(std::max(0, 2 - i)) + ";t="))
        << r.headers.Get("RateLimit").value_or("");
    EXPECT_EQ(r.headers.Get("RateLimit-Policy").value_or(""), "\"fixed window\";\"api\";q=3;w=300");
    EXPECT_EQ(r.status, i < 3 ? 200 : 429);
  }
  HttpResponse resolve = Get("/google/gemma-7b-it/resolve/main/config.json", {}, HttpMethod::kHead);
  EXPECT_TRUE(std::string(resolve.headers.Get("RateLimit").value_or(""))
                  .starts_with("\"resolvers\";r=4999"));
}

TEST_F(FakeHubWire, ResolveRedirectsAndContentRanges) {
  Start({});
  HttpResponse small = Get("/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/resolve/main/config.json");
  EXPECT_EQ(small.status, 307);
  const std::string location(small.headers.Get("Location").value_or(""));
  EXPECT_TRUE(
      location.starts_with("/api/resolve-cache/models/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/"));
  EXPECT_NE(location.find("&etag=%22"), std::string::npos);
  HttpResponse cached = Get(location, {{"Range", "bytes=0-9"}});
  EXPECT_EQ(cached.status, 206);
  EXPECT_EQ(cached.body, "{\n  \"archi");
  EXPECT_TRUE(
      std::string(cached.headers.Get("Content-Range").value_or("")).starts_with("bytes 0-9/"));
  HttpResponse tail = Get(location, {{"Range", "bytes=-2"}});
  EXPECT_EQ(tail.body, "}\n");
  HttpResponse past = Get(location, {{"Range", "bytes=999999-"}});
  EXPECT_EQ(past.status, 416);
  EXPECT_TRUE(std::string(past.headers.Get("Content-Range").value_or("")).starts_with("bytes */"));

  HttpResponse lfs =
      Get("/microsoft/Phi-3-mini-4k-instruct/resolve/main/model-00002-of-00002.safetensors");
  EXPECT_EQ(lfs.status, 302);
  std::string cdn(lfs.headers.Get("Location").value_or(""));
  EXPECT_TRUE(cdn.starts_with(hub_->cdn_endpoint() + "/repos/"));
  EXPECT_EQ(Get(cdn, {{"Range", "bytes=0-7"}}).status, 206);
  std::string tampered = cdn;
  tampered.replace(tampered.find("Signature=") + 10, 4, "dead");
  EXPECT_EQ(Get(tampered).status, 403) << "the signature is checked";
}

TEST_F(FakeHubWire, RawServesGitFilesAndLfsPointers) {
  Start({});
  HttpResponse head =
      Get("/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/raw/main/config.json", {}, HttpMethod::kHead);
  EXPECT_EQ(head.status, 200);
  HttpResponse pointer =
      Get("/google/gemma-7b-it/raw/main/tokenizer.model", {{"Authorization", "Bearer none"}});
  EXPECT_EQ(pointer.status, 401) << "unknown token";
  HttpResponse missing =
      Get("/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/raw/main/nope", {}, HttpMethod::kHead);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.headers.Get("X-Error-Code").value_or(""), "EntryNotFound");
}

TEST_F(FakeHubWire, ReplayShowsHistoryArrivingOnItsClock) {
  FakeHubOptions options;
  options.mode = Mode::kReplay;
  options.speed = 0;  // only AdvanceReplayClock moves it
  options.replay_start = ParseIsoTime("2024-04-18T00:00:00.000Z");
  Start(std::move(options));
  auto head = [&] {
    HttpResponse r = Get("/api/models/meta-llama/Meta-Llama-3-8B-Instruct/refs");
    if (r.status != 200) return std::string("status ") + std::to_string(r.status);
    return json::parse(r.body)["branches"][0]["targetCommit"].get<std::string>();
  };
  const std::string upload = head();
  EXPECT_EQ(upload.size(), 40u);
  EXPECT_EQ(Get("/api/models/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/refs").status, 401)
      << "a repo from 2025 does not exist yet";
  hub_->AdvanceReplayClock(std::chrono::hours(24 * 2));  // 2024-04-20: config.json commit
  EXPECT_EQ(head(), "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf");
  HttpResponse r = Get("/api/models/meta-llama/Meta-Llama-3-8B-Instruct/commits/main");
  EXPECT_EQ(r.headers.Get("X-Total-Count").value_or(""), "4");
  hub_->AdvanceReplayClock(std::chrono::hours(24));
  EXPECT_EQ(head(), "a8977699a3d0820e80129fb3c93c20fbd9972c41");
  HttpResponse clock = Get("/_fakehub/clock");
  EXPECT_EQ(json::parse(clock.body)["mode"], "replay");
}

TEST_F(FakeHubWire, RequestLogIsReadableOverHttp) {
  Start({});
  Get("/api/models/google/gemma-7b-it/refs", {{"Authorization", "Bearer whatever"}});
  Get("/google/gemma-7b-it/resolve/main/config.json", {{"Range", "bytes=0-1"}}, HttpMethod::kHead);
  HttpResponse log = Get("/_fakehub/log");
  ASSERT_EQ(log.status, 200);
  json entries = json::parse(log.body);
  ASSERT_EQ(entries.size(), 2u) << "control requests are not logged";
  EXPECT_EQ(entries[0]["path"], "/api/models/google/gemma-7b-it/refs");
  EXPECT_EQ(entries[0]["authorization"], true);
  EXPECT_EQ(entries[0]["status"], 401);
  EXPECT_EQ(entries[1]["method"], "HEAD");
  EXPECT_EQ(entries[1]["range"], "bytes=0-1");
  EXPECT_EQ(hub_->RequestLog().size(), 2u);
}

TEST_F(FakeHubWire, FaultRulesParseFromJson) {
  auto rule =
      ParseFaultRule(R"({"action":"retry_after","path":"/refs$","retry_after":12,"times":2})");
  ASSERT_TRUE(rule.ok()) << rule.error().message;
  EXPECT_EQ(rule->action, FaultAction::kRetryAfter);
  EXPECT_EQ(rule->status, 429);
  EXPECT_EQ(rule->retry_after, "12");
  EXPECT_EQ(rule->times, 2);
  EXPECT_FALSE(ParseFaultRule(R"({"action":"explode"})").ok());
  EXPECT_FALSE(ParseFaultRule(R"({"action":"status","path":"(unclosed"})").ok());
  EXPECT_FALSE(ParseFaultRule("[1,2]").ok());

  Start({});
  FaultRule twice =
      *ParseFaultRule(R"({"action":"status","status":502,"path":"gemma-7b-it/refs","times":2})");
  hub_->AddFault(twice);
  EXPECT_EQ(Get("/api/models/google/gemma-7b-it/refs").status, 502);
  EXPECT_EQ(Get("/api/models/google/gemma-7b-it/refs").status, 502);
  EXPECT_EQ(Get("/api/models/google/gemma-7b-it/refs").status, 200) << "only two hits";
}

// The executable prints one ready line and serves until SIGTERM.
TEST(FakeHubBinary, PrintsReadyLineAndServes) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  const std::string fixtures = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
  std::vector<std::string> args = {FAKEHUB_BINARY, "--fixtures", fixtures, "--port", "0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, FAKEHUB_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string line;
  char c = 0;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  EXPECT_TRUE(line.starts_with("fakehub listening on http://127.0.0.1:")) << line;
  const std::string url = line.substr(line.find("http://"));

  boost::asio::io_context io;
  hub::CurlTransport transport(io);
  HttpRequest request;
  request.url = url + "/api/models?author=google";
  std::optional<hub::TransportOutcome> outcome;
  transport.Start(request, [&](hub::TransportOutcome o) { outcome = std::move(o); });
  while (!outcome) io.run_one_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(outcome->ok());
  EXPECT_EQ(json::parse(outcome->response.body).size(), 2u);

  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace hubwatch::fakehub
