// The configuration file as the operator writes it: every malformed value is one bounded,
// escaped error (never an exception), ref names and secrets are checked as the admin API checks
// them, and PrepareConfig refuses what a start cannot run, naming the key.

#include "daemon/config/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "daemon/app/prepared_config.h"
#include "tests/daemon/scratch_dir.h"

namespace hubwatch::config {
namespace {

// The message of a config that must be refused.
std::string Refused(const std::string& text) {
  Result<DaemonConfig> c = ParseConfig(text, "");
  EXPECT_FALSE(c.ok()) << text.substr(0, 200);
  if (c.ok()) return "";
  EXPECT_EQ(c.error().code, ErrorCode::kInvalidInput);
  return c.error().message;
}

TEST(ConfigParse, NumbersOutOfRangeAreBadInputNotExceptions) {
  for (const std::string text : {
           R"({"poll": {"interval_s": 1e999}})",
           R"({"poll": {"interval_s": -1e400}})",
           R"({"repos": [{"id": "a/b", "refs": [1e999]}]})",
           R"({"unknown": [1, 2, -1e400]})",
       }) {
    const std::string message = Refused(text);
    EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
  }
  // Integers above INT64_MAX are out of range, not wrapped to -1.
  EXPECT_NE(Refused(R"({"poll": {"interval_s": 18446744073709551615}})")
                .find("between 1 and 2592000, got 18446744073709551615"),
            std::string::npos);
  EXPECT_NE(Refused(R"({"poll": {"settle_window_s": -1}})").find("between 0 and"),
            std::string::npos);
  Result<DaemonConfig> zero = ParseConfig(R"({"poll": {"settle_window_s": 0}})", "");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->poll.settle_window_s, 0);
}

TEST(ConfigParse, MessagesQuoteAtMostEightyCharactersEscaped) {
  std::string huge_array = R"({"poll": {"interval_s": [)";
  for (int i = 0; i < 1'000'000; ++i) huge_array += i ? ",0" : "0";
  huge_array += "]}}";
  std::string message = Refused(huge_array);
  EXPECT_LT(message.size(), 200u) << message.substr(0, 300);
  EXPECT_NE(message.find("an array of 1000000 element(s)"), std::string::npos) << message;

  const std::string long_text(1'000'000, 'x');
  for (const std::string& text : {
           R"({"store": [")" + long_text + R"("]})", R"({")" + long_text + R"(": 1})",
           R"({"hub": {"endpoint": "ftp://)" + long_text + R"("}})",
           R"({"repos": [{"id": ")" + long_text + R"("}]})",
           R"({"repos": [{"id": "a/b", "refs": [")" + long_text + R"("]}]})",
           R"({"poll": {"interval_s": ")" + long_text + R"("}})",
           R"({"poll": {"interval_s": ")" + long_text,  // unterminated: the parser's message
       }) {
    message = Refused(text);
    EXPECT_LT(message.size(), 300u) << message.substr(0, 400);
  }
  // Control characters are escaped, never written raw.
  message = Refused(R"({"log": {"format": "\u001b[2J"}, "k\u001b[31m": 1})");
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_NE(message.find("\\u001b[31m"), std::string::npos) << message;
  // So are DEL and C1 (U+009B is a CSI on many terminals), which JSON leaves unescaped.
  message = Refused("{\"rep\x7fs\": 1}");
  EXPECT_NE(message.find("rep\\x7fs"), std::string::npos) << message;
  message = Refused(
      "{\"k\xc2\x9b"
      "2J\": 1}");
  for (unsigned char ch : message) EXPECT_TRUE(ch >= 0x20 && ch != 0x7f) << message;
  EXPECT_EQ(message.find("\xc2\x9b"), std::string::npos) << message;
}

TEST(ConfigParse, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep =
      R"({"repos": )" + std::string(100'000, '[') + std::string(100'000, ']') + "}";
  EXPECT_NE(Refused(deep).find("nested deeper than"), std::string::npos);
}

TEST(ConfigParse, ARepoListedTwiceOrInOtherLettersIsRefused) {
  EXPECT_NE(Refused(R"({"repos": [{"id": "Qwen/Qwen2.5-7B"}, {"id": "Qwen/Qwen2.5-7B"}]})")
                .find("repos[1]: Qwen/Qwen2.5-7B is listed twice"),
            std::string::npos);
  const std::string message =
      Refused(R"({"repos": [{"id": "Qwen/Qwen2.5-7B"}, {"id": "a/b"}, {"id": "qwen/qwen2.5-7b"}]})");
  EXPECT_NE(message.find("repos[2]: qwen/qwen2.5-7b is Qwen/Qwen2.5-7B (repos[0]) in other "
                         "letters"),
            std::string::npos)
      << message;
}

TEST(ConfigParse, RefsAreCheckedAsTheAdminApiChecksThem) {
  for (const std::string ref : {"../../x", "ma\\u0000in", "-x", "/main", "main/", "a b", "a:b",
                                "a~1", "a^", "a..b", "\\u001b[2J"}) {
    const std::string message =
        Refused(R"({"repos": [{"id": "a/b", "refs": [")" + ref + R"("]}]})");
    EXPECT_NE(message.find("is not a ref name"), std::string::npos) << ref << ": " << message;
    EXPECT_EQ(message.find('\0'), std::string::npos);
    EXPECT_EQ(message.find('\x1b'), std::string::npos);
  }
  std::string seventeen = R"({"repos": [{"id": "a/b", "refs": [)";
  for (int i = 0; i < 17; ++i) seventeen += (i ? ",\"r" : "\"r") + std::to_string(i) + "\"";
  EXPECT_NE(Refused(seventeen + "]}]}").find("1 to 16"), std::string::npos);
  Result<DaemonConfig> ok =
      ParseConfig(R"({"repos": [{"id": "a/b", "refs": ["main", "v1.0", "refs/pr/1"]}]})", "");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->repos[0].refs.size(), 3u);
}

TEST(ConfigParse, PinsAreRevisionsAndSubscriptionsMayAskForHistory) {
  for (const std::string pins : {R"("4d6c61d")", R"(["4d6c61"])", R"(["4D6C61DA"])", R"([7])",
                                 R"(["4d6c61da9a5b1e26b5a2b2d5dd5a7d6e1a2b3c4d5"])"}) {
    const std::string message = Refused(R"({"repos": [{"id": "a/b", "pins": )" + pins + "}]}");
    EXPECT_NE(message.find("repos[0].pins"), std::string::npos) << pins << ": " << message;
  }
  Result<DaemonConfig> ok = ParseConfig(
      R"({"repos": [{"id": "a/b", "pins": ["4d6c61d", "4d6c61da9a5b1e26b5a2b2d5dd5a7d6e1a2b3c4d"]}],
          "subscriptions": [{"url": "https://example.com/h", "secret_file": "s", "backfill": true}]})",
      "");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->repos[0].pins.size(), 2u);
  EXPECT_TRUE(ok->subscriptions[0].backfill);
  EXPECT_NE(Refused(R"({"subscriptions": [{"url": "https://example.com/h", "secret_file": "s",
                                           "backfill": "yes"}]})")
                .find("backfill must be true or false"),
            std::string::npos);
}

TEST(ConfigParse, DerivativesAreOffByDefaultTrueOrAnObjectWithMaxAndRelations) {
  Result<DaemonConfig> c = ParseConfig(
      R"({"repos": [{"id": "a/b"}, {"id": "c/d", "derivatives": true},
                    {"id": "e/f", "derivatives": {"max": 40, "relations": ["quantized", "merge"]}}],
          "poll": {"derivatives_interval_s": 7200}})",
      "");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->repos[0].derivatives.enabled);
  EXPECT_TRUE(c->repos[1].derivatives.enabled);
  EXPECT_EQ(c->repos[1].derivatives.max, 200);
  EXPECT_EQ(c->repos[1].derivatives.relations.size(), 4u);
  EXPECT_TRUE(c->repos[2].derivatives.enabled);
  EXPECT_EQ(c->repos[2].derivatives.max, 40);
  EXPECT_EQ(std::vector(c->repos[2].derivatives.relations.begin(),
                        c->repos[2].derivatives.relations.end()),
            (std::vector{derivatives::Relation::kQuantized, derivatives::Relation::kMerge}));
  EXPECT_EQ(c->poll.derivatives_interval_s, 7200);

  EXPECT_NE(Refused(R"({"repos": [{"id": "a/b", "derivatives": "yes"}]})")
                .find("repos[0].derivatives must be true, false or"),
            std::string::npos);
  EXPECT_NE(Refused(R"({"repos": [{"id": "a/b", "derivatives": {"max": 0}}]})")
                .find("repos[0].derivatives.max"),
            std::string::npos);
  EXPECT_NE(Refused(R"({"repos": [{"id": "a/b", "derivatives": {"relations": ["fork"]}}]})")
                .find("got \"fork\""),
            std::string::npos);
  EXPECT_NE(Refused(R"({"repos": [{"id": "a/b", "derivatives": {"maximum": 3}}]})").find("maximum"),
            std::string::npos);
}

TEST(ConfigParse, PathsWithNulAndEndpointsThatAreNotUrlsAreRefused) {
  EXPECT_NE(Refused(R"({"store": "a\u0000b"})").find("store must not hold a NUL"),
            std::string::npos);
  EXPECT_NE(Refused(R"({"hub": {"endpoint": "huggingface.co"}})").find("http(s) URL"),
            std::string::npos);
}

using ConfigFiles = hubwatch::testing::ScratchDirTest;

TEST_F(ConfigFiles, HubCaFileIsResolvedAgainstTheConfigAndUsedByTheHubSettings) {
  Result<DaemonConfig> c = ParseConfig(R"({"hub": {"ca_file": "certs/ca.pem"}})", dir_.string());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->hub.ca_file, (dir_ / "certs" / "ca.pem").string());
  std::filesystem::create_directories(dir_ / "certs");
  Write("certs/ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  Result<hub::HubSettings> settings = HubSettingsFor(*c);
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  EXPECT_EQ(settings->ca_file, (dir_ / "certs" / "ca.pem").string());
  EXPECT_TRUE(HubSettingsFor(DaemonConfig{})->ca_file.empty()) << "default: the system store";
  EXPECT_NE(Refused(R"({"hub": {"ca_file": 1}})").find("hub.ca_file must be a non-empty string"),
            std::string::npos);
}

TEST(ConfigParse, ChangeHintsAreOnByDefaultAndTheirKeysAreChecked) {
  Result<DaemonConfig> d = ParseConfig("{}", "");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->poll.hints);
  EXPECT_EQ(d->poll.reconcile_interval_s, 21600);
  EXPECT_EQ(d->poll.listing_page_size, 1000);
  EXPECT_FALSE(d->hub.webhook_secret_file);
  Result<DaemonConfig> off = ParseConfig(R"({"poll": {"hints": "off"}})", "");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->poll.hints);
  // A long interval raises the default reconcile interval with it, never an explicit one.
  Result<DaemonConfig> slow = ParseConfig(R"({"poll": {"interval_s": 86400}})", "");
  ASSERT_TRUE(slow.ok());
  EXPECT_EQ(slow->poll.reconcile_interval_s, 86400);
  EXPECT_NE(Refused(R"({"poll": {"interval_s": 900, "reconcile_interval_s": 600}})")
                .find("poll.reconcile_interval_s (600) must be at least poll.interval_s (900)"),
            std::string::npos);
  EXPECT_NE(Refused(R"({"poll": {"hints": "webhooks"}})").find("poll.hints must be"),
            std::string::npos);
  EXPECT_NE(Refused(R"({"poll": {"hints": true}})").find("poll.hints"), std::string::npos);
  EXPECT_NE(Refused(R"({"poll": {"listing_page_size": 5000}})").find("poll.listing_page_size"),
            std::string::npos);
  Result<DaemonConfig> hook = ParseConfig(R"({"hub": {"webhook_secret_file": "hook"}})", "/etc/hw");
  ASSERT_TRUE(hook.ok());
  EXPECT_EQ(hook->hub.webhook_secret_file, "/etc/hw/hook");
}

TEST_F(ConfigFiles, AMissingFileOrADirectoryIsBadInputAndSaysSo) {
  Result<DaemonConfig> missing = LoadConfig((dir_ / "nope.json").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidInput);
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
  Result<DaemonConfig> directory = LoadConfig(dir_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, ErrorCode::kInvalidInput);
  EXPECT_NE(directory.error().message.find("is a directory"), std::string::npos)
      << directory.error().message;

  DaemonConfig c;
  c.hub.token_file = dir_.string();
  Result<std::optional<std::string>> token = ReadTokenFile(c);
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.error().message.find("is a directory"), std::string::npos);
  c.hub.token_file = (dir_ / "nope").string();
  EXPECT_EQ(ReadTokenFile(c).error().code, ErrorCode::kInvalidInput);
}

TEST_F(ConfigFiles, SecretsWithControlCharactersAreRefusedNotCut) {
  DaemonConfig c;
  for (const std::string& content :
       {std::string("hf_x\0rest", 9), std::string("hf_x\nrest"), std::string("hf\x1bx")}) {
    c.hub.token_file = Write("token", content);
    c.api.admin_token_file = c.hub.token_file;
    Result<std::optional<std::string>> token = ReadTokenFile(c);
    ASSERT_FALSE(token.ok()) << "accepted: " << content;
    EXPECT_NE(token.error().message.find("control character"), std::string::npos);
    EXPECT_EQ(token.error().message.find("rest"), std::string::npos);  // never the content
    EXPECT_FALSE(ReadAdminToken(c).ok());
  }
  c.hub.token_file = Write("token", "  hf_x \r\n");  // surrounding whitespace is trimmed
  ASSERT_TRUE(ReadTokenFile(c).ok());
  EXPECT_EQ(**ReadTokenFile(c), "hf_x");
}

TEST_F(ConfigFiles, PrepareRefusesWhatAStartCannotRunAndNamesTheKey) {
  const std::string token = Write("token", "hf_token");
  auto base = [&] {
    DaemonConfig c;
    c.store = (dir_ / "hubwatch.db").string();
    c.hub.endpoint = "http://127.0.0.1:9";
    c.hub.token_file = token;
    c.api.listen = "127.0.0.1:0";
    return c;
  };
  ASSERT_TRUE(app::PrepareConfig(base()).ok());
  struct Case {
    std::function<void(DaemonConfig&)> edit;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {[](DaemonConfig& c) { c.api.listen = "garbage"; }, "listen must be HOST:PORT"},
      {[](DaemonConfig& c) { c.api.listen = "127.0.0.1:99999"; }, "the port must be"},
      {[](DaemonConfig& c) { c.api.listen = "example.com:80"; }, "not an IP address"},
      {[](DaemonConfig& c) { c.api.listen = std::string("127.0.0.1\0x:80", 14); },
       "not an IP address"},
      {[](DaemonConfig& c) { c.api.listen = std::string(100000, '1') + ":80"; }, "..."},
      {[&](DaemonConfig& c) { c.store = (dir_ / "missing" / "hubwatch.db").string(); },
       "does not exist"},
      {[&](DaemonConfig& c) { c.store = dir_.string(); }, "is a directory"},
      {[&](DaemonConfig& c) { c.hub.token_file = (dir_ / "none").string(); }, "hub.token_file"},
      {[&](DaemonConfig& c) { c.hub.token_file = Write("empty", " \n"); }, "is empty"},
      {[&](DaemonConfig& c) { c.hub.ca_file = (dir_ / "none.pem").string(); },
       "hub.ca_file " + (dir_ / "none.pem").string() + " cannot be read"},
      {[&](DaemonConfig& c) { c.hub.ca_file = Write("ca.pem", "not a certificate"); },
       "holds no PEM certificate"},
      {[&](DaemonConfig& c) { c.hub.endpoint = "http://hub.invalid"; }, "cleartext"},
      {[&](DaemonConfig& c) { c.api.admin_token_file = (dir_ / "none").string(); },
       "admin_token_file"},
      {[&](DaemonConfig& c) {
         c.subscriptions.push_back({"http://[::1", token, "*", {}, "behavioral"});
       },
       "subscriptions[0].url"},
      {[&](DaemonConfig& c) {
         c.subscriptions.push_back({"https://hooks.example/", token, "*", {}, "behavioral"});
       },
       "subscriptions[0].secret_file"},
  };
  for (const Case& k : cases) {
    DaemonConfig c = base();
    k.edit(c);
    Result<app::PreparedConfig> p = app::PrepareConfig(c);
    ASSERT_FALSE(p.ok()) << k.expect;
    EXPECT_EQ(p.error().code, ErrorCode::kInvalidInput) << p.error().message;
    EXPECT_NE(p.error().message.find(k.expect), std::string::npos) << p.error().message;
    EXPECT_LT(p.error().message.size(), 300u);
  }
}

TEST_F(ConfigFiles, TheKeysThatNeedARestartAreNamedSecretsByKeyOnly) {
  DaemonConfig c;
  c.store = (dir_ / "hubwatch.db").string();
  c.hub.endpoint = "http://127.0.0.1:9";
  c.hub.token_file = Write("token", "hf_old_secret");
  Result<app::PreparedConfig> running = app::PrepareConfig(c);
  ASSERT_TRUE(running.ok()) << running.error().message;
  c.poll.interval_s = 60;  // applied at once: not listed
  c.repos.push_back({.id = "a/b", .refs = {"main"}, .derivatives = {}});
  EXPECT_TRUE(app::KeysNeedingRestart(*running, *app::PrepareConfig(c)).empty());
  c.api.listen = "127.0.0.1:1";
  c.store = (dir_ / "other.db").string();
  Write("token", "hf_new_secret");  // same path, new content
  EXPECT_EQ(app::KeysNeedingRestart(*running, *app::PrepareConfig(c)),
            (std::vector<std::string>{"store", "hub.token_file", "listen"}));
}

}  // namespace
}  // namespace hubwatch::config
