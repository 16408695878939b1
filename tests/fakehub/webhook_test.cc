// Webhooks and pushes: Hub-format payloads POSTed to a receiver on 127.0.0.1 when the replay
// clock lands a commit (AdvanceReplayClock and the clock itself), on pushes (wire and
// in-process), renames and deletions; deliveries in the request log; loopback-only URLs; the
// executable's new flags.

#include "tests/fakehub/webhook.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <set>

#include "tests/fakehub/hashing.h"
#include "tests/fakehub/synthetic.h"
#include "tests/fakehub/test_support.h"

extern char** environ;

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;
using testing::HttpCall;
using testing::WebhookReceiver;
using Delivery = WebhookReceiver::Delivery;

const std::string kFixtures = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
const std::regex kHex24("[0-9a-f]{24}");

class Webhooks : public ::testing::Test {
 protected:
  void Start(FakeHubOptions options) {
    if (options.fixtures_dir.empty() && options.extra_repos.empty())
      options.fixtures_dir = kFixtures;
    if (options.webhook_url.empty()) options.webhook_url = receiver_.url();
    options.webhook_secret = "s3cret";
    auto hub = FakeHub::Start(std::move(options));
    ASSERT_TRUE(hub.ok()) << hub.error().message;
    hub_ = std::move(hub).value();
  }
  json Get(const std::string& path) {
    testing::WireResponse r = HttpCall("GET", hub_->endpoint() + path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return json::parse(r.body, nullptr, false);
  }
  std::string Head(const std::string& repo) {
    return Get("/api/models/" + repo + "/refs")["branches"][0]["targetCommit"];
  }
  // The webhook entries of the request log, once there are n (or after 5 s).
  std::vector<LoggedRequest> Logged(size_t n) {
    std::vector<LoggedRequest> hooks;
    for (int i = 0; i < 100; ++i) {
      hooks.clear();
      for (LoggedRequest& r : hub_->RequestLog()) {
        if (r.server == "webhook") hooks.push_back(std::move(r));
      }
      if (hooks.size() >= n) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return hooks;
  }
  static const Delivery* For(const std::vector<Delivery>& all, const std::string& repo) {
    for (const Delivery& d : all) {
      if (d.json["repo"]["name"] == repo) return &d;
    }
    return nullptr;
  }

  WebhookReceiver receiver_;  // declared first: outlives the hub that calls it
  std::unique_ptr<FakeHub> hub_;
};

TEST_F(Webhooks, ReplayLandingPostsAHubUpdate) {
  FakeHubOptions options;
  options.mode = Mode::kReplay;
  options.speed = 0;
  options.replay_start = ParseIsoTime("2024-04-18T00:00:00.000Z");
  Start(std::move(options));
  const std::string repo = "meta-llama/Meta-Llama-3-8B-Instruct";
  const std::string before = Head(repo);
  EXPECT_TRUE(receiver_.WaitFor(1, std::chrono::milliseconds(300)).empty())
      << "heads already there at start are not news";
  hub_->AdvanceReplayClock(std::chrono::hours(24 * 2));
  std::vector<Delivery> got = receiver_.WaitFor(2);
  const Delivery* d = For(got, repo);
  ASSERT_NE(d, nullptr) << got.size() << " deliveries";
  EXPECT_EQ(d->target, "/hooks");
  EXPECT_EQ(d->headers.at("X-Webhook-Secret"), "s3cret");
  EXPECT_EQ(d->headers.at("Content-Type"), "application/json");
  const json& p = d->json;
  EXPECT_EQ(p["event"], (json{{"action", "update"}, {"scope", "repo.content"}}));
  EXPECT_EQ(p["repo"]["type"], "model");
  EXPECT_EQ(p["repo"]["private"], false);
  EXPECT_EQ(p["repo"]["headSha"], "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf");
  EXPECT_EQ(p["repo"]["url"]["web"], hub_->endpoint() + "/" + repo);
  EXPECT_EQ(p["repo"]["url"]["api"], hub_->endpoint() + "/api/models/" + repo);
  EXPECT_TRUE(std::regex_match(p["repo"]["owner"]["id"].get<std::string>(), kHex24));
  EXPECT_EQ(p["repo"]["id"], Get("/api/models/" + repo + "?expand[]=sha")["_id"]);
  EXPECT_EQ(p["webhook"]["version"], 3);
  EXPECT_TRUE(std::regex_match(p["webhook"]["id"].get<std::string>(), kHex24));
  EXPECT_EQ(p["updatedRefs"],
            (json::array({{{"ref", "refs/heads/main"},
                           {"oldSha", before},
                           {"newSha", "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf"}}})));

  std::vector<LoggedRequest> log = Logged(got.size());
  ASSERT_EQ(log.size(), got.size());
  EXPECT_EQ(log[0].method, "POST");
  EXPECT_EQ(log[0].path, "/hooks");
  EXPECT_EQ(log[0].status, 200);
  EXPECT_EQ(json::parse(log[0].body), got[0].json);
  json wire_log = Get("/_fakehub/log");
  int hooks = 0;
  for (const json& entry : wire_log) {
    if (entry["server"] == "webhook") {
      ++hooks;
      EXPECT_TRUE(entry["body"].is_string());
    }
  }
  EXPECT_EQ(hooks, static_cast<int>(got.size()));
}

TEST_F(Webhooks, TheRunningClockLandsACommitWithinATick) {
  SyntheticOptions s;
  s.repos = 3;
  s.commits = 2;
  s.tensors_per_file = 0;
  FakeHubOptions options;
  options.extra_repos = GenerateSyntheticRepos(s);
  const std::string first = options.extra_repos[0].commits[0].id;
  const std::string second = options.extra_repos[0].commits[1].id;
  options.mode = Mode::kReplay;
  options.speed = 10;  // repo 0's second commit (first_date + 3600) lands after 0.1 s
  options.replay_start = *ParseIsoTime(s.first_date) + 3600 - 1;
  const auto started = std::chrono::steady_clock::now();
  Start(std::move(options));
  std::vector<Delivery> got = receiver_.WaitFor(1, std::chrono::seconds(3));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(got[0].json["repo"]["name"], "synthetic/model-00000");
  EXPECT_EQ(got[0].json["updatedRefs"][0]["oldSha"], first);
  EXPECT_EQ(got[0].json["updatedRefs"][0]["newSha"], second);
}

TEST_F(Webhooks, PushShowsEverywhereAndFires) {
  Start({});
  const std::string repo = "microsoft/Phi-3-mini-4k-instruct";
  const std::string before = Head(repo);
  const std::string text = "{\"model_type\": \"phi3\", \"pushed\": true}\n";
  testing::WireResponse pushed =
      HttpCall("POST", hub_->endpoint() + "/_fakehub/repos/" + repo + "/commit",
               json{{"files", {{"config.json", text}}}, {"title", "Bump config"}}.dump());
  ASSERT_EQ(pushed.status, 200) << pushed.body;
  const std::string sha = json::parse(pushed.body)["commit"];
  EXPECT_EQ(sha.size(), 40u);
  EXPECT_EQ(Head(repo), sha);
  json commits = Get("/api/models/" + repo + "/commits/main");
  EXPECT_EQ(commits[0]["id"], sha);
  EXPECT_EQ(commits[0]["title"], "Bump config");
  EXPECT_EQ(commits[1]["id"], before);
  EXPECT_EQ(HttpCall("GET", hub_->endpoint() + "/" + repo + "/raw/main/config.json").body, text);
  bool in_tree = false;
  for (const json& e : Get("/api/models/" + repo + "/tree/main")) {
    if (e["path"] == "config.json") in_tree = e["oid"] == GitBlobOid(text);
  }
  EXPECT_TRUE(in_tree);
  json top = Get("/api/models?sort=lastModified&expand[]=sha&limit=1");
  EXPECT_EQ(top[0]["id"], repo);
  EXPECT_EQ(top[0]["sha"], sha);

  std::string sha2;
  ASSERT_TRUE(hub_->PushCommit("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
                               {{"README.md", "# hello\n"}}, "Add README", &sha2)
                  .ok());
  EXPECT_EQ(Head("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"), sha2);
  std::vector<Delivery> got = receiver_.WaitFor(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].json["repo"]["name"], repo) << "in order";
  EXPECT_EQ(got[0].json["updatedRefs"][0]["oldSha"], before);
  EXPECT_EQ(got[0].json["updatedRefs"][0]["newSha"], sha);
  EXPECT_EQ(got[1].json["repo"]["headSha"], sha2);

  const std::string url = hub_->endpoint() + "/_fakehub/repos/";
  EXPECT_EQ(HttpCall("POST", url + "nobody/nothing/commit", R"({"files":{}})").status, 400);
  EXPECT_EQ(HttpCall("POST", url + "no-namespace/commit", R"({"files":{"a":"b"}})").status, 400);
  EXPECT_EQ(HttpCall("POST", url + repo + "/commit", "not json").status, 400);
  EXPECT_EQ(HttpCall("POST", url + repo + "/commit", R"({"files":["a"]})").status, 400);
  EXPECT_EQ(HttpCall("POST", url + repo + "/commit", R"({"files":{}})").status, 400);
  EXPECT_EQ(HttpCall("POST", url + repo + "/commit", R"({"files":{"../x":"y"}})").status, 400);
  EXPECT_EQ(HttpCall("POST", url + repo + "/commit", R"({"files":{"a":"b"},"title":7})").status,
            400);
}

// A push to a repo that does not exist creates it, as an upload does on the Hub: it lists at the
// top of its owner's listing with what "model" says of it, and its first head is a webhook with
// no old sha.
TEST_F(Webhooks, APushToANewRepoCreatesIt) {
  Start({});
  testing::WireResponse created = HttpCall(
      "POST", hub_->endpoint() + "/_fakehub/repos/newcomer/model-a/commit",
      R"({"files": {"config.json": "{}"}, "model": {"pipeline_tag": "text-generation",
          "downloads": 42, "tags": ["safetensors"]}})");
  ASSERT_EQ(created.status, 200) << created.body;
  const json reply = json::parse(created.body);
  EXPECT_EQ(reply["created"], true);
  EXPECT_EQ(reply["repo"], "newcomer/model-a");
  EXPECT_EQ(Head("newcomer/model-a"), reply["commit"]);
  json listed = Get("/api/models?author=newcomer&sort=lastModified&expand[]=sha&expand[]=downloads"
                    "&expand[]=pipeline_tag&expand[]=tags");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["sha"], reply["commit"]);
  EXPECT_EQ(listed[0]["downloads"], 42);
  EXPECT_EQ(listed[0]["pipeline_tag"], "text-generation");
  EXPECT_EQ(Get("/api/models?filter=text-generation&author=newcomer").size(), 1u);
  std::vector<Delivery> got = receiver_.WaitFor(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].json["repo"]["name"], "newcomer/model-a");
  EXPECT_TRUE(got[0].json["updatedRefs"][0]["oldSha"].is_null());
  // A second push is an ordinary one; "model" changes what the listing shows.
  testing::WireResponse again = HttpCall(
      "POST", hub_->endpoint() + "/_fakehub/repos/newcomer/model-a/commit",
      R"({"files": {"README.md": "x"}, "model": {"downloads": 7}})");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(json::parse(again.body)["created"], false);
  EXPECT_EQ(Get("/api/models?author=newcomer&expand[]=downloads")[0]["downloads"], 7);
  EXPECT_EQ(HttpCall("POST", hub_->endpoint() + "/_fakehub/repos/newcomer/model-a/commit",
                     R"({"files": {"a": "b"}, "model": {"stars": 1}})")
                .status,
            400);
}

TEST_F(Webhooks, RenameAndDeleteArePosted) {
  Start({});
  ASSERT_TRUE(hub_->RenameRepo("google/gemma-7b-it", "gg/gemma").ok());
  EXPECT_EQ(HttpCall("POST", hub_->endpoint() + "/_fakehub/faults",
                     R"({"action":"rename","repo":"gg/gemma","to":"gg/gemma-2"})")
                .status,
            200);
  ASSERT_TRUE(hub_->DeleteRepo("gg/gemma-2").ok());
  std::vector<Delivery> got = receiver_.WaitFor(3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].json["event"], (json{{"action", "move"}, {"scope", "repo"}}));
  EXPECT_EQ(got[0].json["repo"]["name"], "google/gemma-7b-it");
  EXPECT_EQ(got[0].json["movedTo"]["name"], "gg/gemma");
  EXPECT_NE(got[0].json["movedTo"]["owner"]["id"], got[0].json["repo"]["owner"]["id"]);
  EXPECT_EQ(got[1].json["repo"]["name"], "gg/gemma");
  EXPECT_EQ(got[1].json["movedTo"]["name"], "gg/gemma-2");
  EXPECT_EQ(got[2].json["event"], (json{{"action", "delete"}, {"scope", "repo"}}));
  EXPECT_EQ(got[2].json["repo"]["name"], "gg/gemma-2");
  EXPECT_EQ(got[2].json["repo"]["id"], got[0].json["repo"]["id"]) << "the same repo throughout";
  EXPECT_EQ(got[2].json["repo"]["headSha"].get<std::string>().size(), 40u);
}

TEST_F(Webhooks, AnswersAndFailuresAreLogged) {
  WebhookReceiver failing(500);
  FakeHubOptions options;
  options.webhook_url = failing.url("/h?x=1");
  Start(std::move(options));
  ASSERT_TRUE(hub_->PushCommit("google/gemma-2-9b-it", {{"a.txt", "a"}}, "a").ok());
  std::vector<LoggedRequest> log = Logged(1);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].status, 500);
  EXPECT_EQ(log[0].path, "/h");
  EXPECT_EQ(log[0].query, "x=1");
  EXPECT_EQ(failing.WaitFor(1).at(0).target, "/h?x=1");
  hub_.reset();

  uint16_t closed = 0;
  {
    testing::asio::io_context io;
    testing::tcp::acceptor probe(io, {testing::asio::ip::make_address("127.0.0.1"), 0});
    closed = probe.local_endpoint().port();
  }
  FakeHubOptions nobody;
  nobody.webhook_url = "http://127.0.0.1:" + std::to_string(closed) + "/";
  Start(std::move(nobody));
  ASSERT_TRUE(hub_->PushCommit("google/gemma-2-9b-it", {{"a.txt", "a"}}, "a").ok());
  log = Logged(1);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].status, 0) << "no receiver";
}

TEST(WebhookUrl, LoopbackHttpOnly) {
  for (const char* bad :
       {"http://10.0.0.1/", "https://127.0.0.1/", "http://localhost:80/", "http://127.0.0.1:0/",
        "http://[::1]:80/", "http://128.0.0.1/", "ftp://x"}) {
    EXPECT_FALSE(ParseWebhookUrl(bad).ok()) << bad;
  }
  auto plain = ParseWebhookUrl("http://127.0.0.5:8080");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->host, "127.0.0.5");
  EXPECT_EQ(plain->port, 8080);
  EXPECT_EQ(plain->target, "/");
  EXPECT_EQ(ParseWebhookUrl("http://127.0.0.1:9/a?b=c")->target, "/a?b=c");
  FakeHubOptions options;
  options.fixtures_dir = kFixtures;
  options.webhook_url = "http://192.168.1.1/hook";
  EXPECT_FALSE(FakeHub::Start(std::move(options)).ok());
}

TEST(PushInReplay, DropsTheReplayCommitsNotYetLanded) {
  FakeHubOptions options;
  options.mode = Mode::kReplay;
  options.speed = 0;
  options.replay_start = ParseIsoTime("2024-04-18T00:00:00.000Z");
  options.fixtures_dir = kFixtures;
  auto hub = FakeHub::Start(std::move(options));
  ASSERT_TRUE(hub.ok());
  std::string sha;
  ASSERT_TRUE(
      (*hub)->PushCommit("meta-llama/Meta-Llama-3-8B-Instruct", {{"x.txt", "x"}}, "x", &sha).ok());
  (*hub)->AdvanceReplayClock(std::chrono::hours(24 * 5));
  json commits = json::parse(
      HttpCall("GET",
               (*hub)->endpoint() + "/api/models/meta-llama/Meta-Llama-3-8B-Instruct/commits/main")
          .body);
  EXPECT_EQ(commits[0]["id"], sha) << "main moved on without the later replay commits";
  EXPECT_EQ(commits[0]["date"], "2024-04-18T00:00:00.000Z") << "dated replay-now";
}

// The executable: --synthetic N --owners K --churn R --webhook URL --webhook-secret S.
pid_t Spawn(std::vector<std::string> args, int* out_fd) {
  int out[2];
  if (pipe(out) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  args.insert(args.begin(), FAKEHUB_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, FAKEHUB_BINARY, &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  *out_fd = out[0];
  return pid;
}

std::string ReadLine(int fd) {
  std::string line;
  char c = 0;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

TEST(FakeHubBinary, OwnersChurnAndWebhookFlags) {
  WebhookReceiver receiver;
  int out = -1;
  pid_t pid = Spawn({"--synthetic", "60", "--owners", "6", "--churn", "600", "--webhook",
                     receiver.url(), "--webhook-secret", "abc", "--port", "0"},
                    &out);
  ASSERT_GT(pid, 0);
  const std::string line = ReadLine(out);
  close(out);
  ASSERT_TRUE(line.starts_with("fakehub listening on http://127.0.0.1:")) << line;
  const std::string url = line.substr(line.find("http://"));
  json top = json::parse(HttpCall("GET", url + "/api/models?sort=lastModified&limit=1000").body);
  ASSERT_EQ(top.size(), 1000u);
  for (const json& item : top) {
    EXPECT_TRUE(item["id"].get<std::string>().starts_with("churn-owner-"))
        << "static mode: churn runs on the wall clock, newer than the synthetic 2025 commits";
  }
  json owned = json::parse(HttpCall("GET", url + "/api/models?filter=synthetic").body);
  std::set<std::string> owners;
  for (const json& item : owned) {
    const std::string id = item["id"];
    EXPECT_TRUE(id.starts_with("owner-000")) << id;
    owners.insert(id.substr(0, id.find('/')));
  }
  EXPECT_EQ(owned.size(), 60u);
  EXPECT_EQ(owners.size(), 6u);
  json mine = json::parse(HttpCall("GET", url + "/api/models?author=owner-0000").body);
  ASSERT_FALSE(mine.empty());
  const std::string repo = mine[0]["id"];
  EXPECT_EQ(HttpCall("POST", url + "/_fakehub/repos/" + repo + "/commit",
                     R"({"files":{"config.json":"{}"}})")
                .status,
            200);
  std::vector<Delivery> got = receiver.WaitFor(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].headers.at("X-Webhook-Secret"), "abc");
  EXPECT_EQ(got[0].json["repo"]["name"], repo);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  for (const auto& [args, code] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"--synthetic", "5", "--webhook", "http://10.1.2.3/", "--port", "0"}, 1},
           {{"--synthetic", "5", "--owners", "6"}, 2},
           {{"--synthetic", "5", "--churn", "-1"}, 2}}) {
    pid_t refused = Spawn(args, &out);
    ASSERT_GT(refused, 0);
    EXPECT_EQ(ReadLine(out), "") << "no ready line";
    close(out);
    waitpid(refused, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), code) << args[2];
  }
}

}  // namespace
}  // namespace hubwatch::fakehub
