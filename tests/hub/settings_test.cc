// Auth and environment: endpoint, token precedence, token file, offline; the token never leaks.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "tracker/hub/etag_cache.h"
#include "tracker/hub/hub_error.h"
#include "tracker/hub/hub_settings.h"

namespace hubwatch::hub {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("hubwatch-settings-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& content) {
    const auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << content;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(HubSettings, DefaultsAndEndpoint) {
  auto s = LoadHubSettings({}, Env({{"HOME", "/nonexistent-home"}}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->endpoint, "https://huggingface.co");
  EXPECT_TRUE(s->token.empty());
  EXPECT_FALSE(s->offline);

  s = LoadHubSettings({}, Env({{"HF_ENDPOINT", "http://127.0.0.1:8080//"}, {"HOME", "/x"}}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->endpoint, "http://127.0.0.1:8080");

  HubConfig config;
  config.endpoint = "http://127.0.0.1:1";
  EXPECT_EQ(LoadHubSettings(config, Env({{"HF_ENDPOINT", "http://127.0.0.1:2"}}))->endpoint,
            "http://127.0.0.1:1");
  EXPECT_FALSE(LoadHubSettings({}, Env({{"HF_ENDPOINT", "ftp://x"}})).ok());
}

TEST(HubSettings, TokenPrecedenceConfigEnvFile) {
  TempDir dir;
  const std::string file = dir.Write("token", "  hf_fromfile\r\n");
  HubConfig config;
  config.token = "hf_config";
  auto env = Env(
      {{"HF_TOKEN", "hf_env"}, {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}, {"HF_TOKEN_PATH", file}});
  EXPECT_EQ(LoadHubSettings(config, env)->token.reveal(), "hf_config");
  EXPECT_EQ(LoadHubSettings({}, env)->token.reveal(), "hf_env");
  EXPECT_EQ(LoadHubSettings({}, env)->token_source, "HF_TOKEN");
  EXPECT_EQ(
      LoadHubSettings({}, Env({{"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}, {"HF_TOKEN_PATH", file}}))
          ->token.reveal(),
      "hf_legacy");
  auto from_file = LoadHubSettings({}, Env({{"HF_TOKEN", "   "}, {"HF_TOKEN_PATH", file}}));
  EXPECT_EQ(from_file->token.reveal(), "hf_fromfile");
  EXPECT_EQ(from_file->token_source, "file " + file);
}

TEST(HubSettings, DefaultTokenPathFollowsHfHomeAndXdg) {
  TempDir dir;
  dir.Write("hf/token", "hf_home_token\n");
  dir.Write("xdg/huggingface/token", "hf_xdg_token\n");
  dir.Write("home/.cache/huggingface/token", "hf_tilde_token\n");
  EXPECT_EQ(LoadHubSettings({}, Env({{"HF_HOME", dir.path() + "/hf"}}))->token.reveal(),
            "hf_home_token");
  EXPECT_EQ(LoadHubSettings({}, Env({{"XDG_CACHE_HOME", dir.path() + "/xdg"}}))->token.reveal(),
            "hf_xdg_token");
  EXPECT_EQ(LoadHubSettings({}, Env({{"HOME", dir.path() + "/home"}}))->token.reveal(),
            "hf_tilde_token");
  EXPECT_EQ(LoadHubSettings({}, Env({{"D", dir.path()}, {"HF_TOKEN_PATH", "${D}/hf/token"}}))
                ->token.reveal(),
            "hf_home_token");
}

TEST(HubSettings, OfflineIsTruthyCaseInsensitive) {
  for (const char* yes : {"1", "ON", "yes", "True"}) {
    EXPECT_TRUE(LoadHubSettings({}, Env({{"HF_HUB_OFFLINE", yes}}))->offline) << yes;
  }
  EXPECT_TRUE(LoadHubSettings({}, Env({{"TRANSFORMERS_OFFLINE", "1"}}))->offline);
  for (const char* no : {"0", "off", "", "nope"}) {
    EXPECT_FALSE(LoadHubSettings({}, Env({{"HF_HUB_OFFLINE", no}}))->offline) << no;
  }
}

TEST(HubSettings, SecretNeverPrints) {
  Secret secret("hf_verysecret");
  std::ostringstream os;
  os << secret;
  EXPECT_EQ(os.str(), "<redacted>");
  EXPECT_EQ(RedactSecret("Bearer hf_verysecret and hf_verysecret", secret),
            "Bearer <redacted> and <redacted>");
  EXPECT_EQ(RedactSecret("nothing here", Secret()), "nothing here");
}

TEST(HubSettings, ATokenNeverGoesOverCleartextOffLoopback) {
  const EnvLookup env = Env({{"HOME", "/nonexistent-home"}});
  auto with_token = [&](std::string endpoint) {
    return LoadHubSettings({.endpoint = std::move(endpoint), .token = "hf_x"}, env);
  };
  auto refused = with_token("http://hub.invalid:8080");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("cleartext"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(refused.error().message.find("hf_x"), std::string::npos);
  EXPECT_TRUE(with_token("https://hub.invalid").ok());
  for (const char* loopback : {"http://127.0.0.1:8080", "http://127.9.9.9", "http://localhost:1",
                               "http://[::1]:8080", "http://a.localhost"}) {
    EXPECT_TRUE(with_token(loopback).ok()) << loopback;
  }
  EXPECT_TRUE(LoadHubSettings({.endpoint = "http://hub.invalid"}, env).ok()) << "no token";
}

TEST(HubSettings, CaFileMustBeAReadablePemBundle) {
  TempDir dir;
  const EnvLookup env = Env({{"HOME", "/nonexistent-home"}});
  auto load = [&](std::string path) { return LoadHubSettings({.ca_file = std::move(path)}, env); };
  EXPECT_TRUE(LoadHubSettings({}, env)->ca_file.empty()) << "default: the system store";
  const std::string pem =
      dir.Write("ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  ASSERT_TRUE(load(pem).ok());
  EXPECT_EQ(load(pem)->ca_file, pem);
  for (const std::string& bad : {dir.path() + "/missing.pem", dir.path(),
                                 dir.Write("key.pem", "-----BEGIN PRIVATE KEY-----\n")}) {
    auto refused = load(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message.find("hub.ca_file " + bad), std::string::npos)
        << refused.error().message;
  }
}

TEST(HubErrorMapping, FollowsHfRaiseForStatusOrder) {
  auto response = [](int status, std::string code, std::string message) {
    HttpResponse r;
    r.status = status;
    if (!code.empty()) r.headers.Add("X-Error-Code", code);
    if (!message.empty()) r.headers.Add("X-Error-Message", message);
    return r;
  };
  struct Case {
    int status;
    const char* code;
    const char* message;
    HubErrorKind kind;
  };
  for (const Case& c : {
           Case{404, "RevisionNotFound", "Invalid rev id: x", HubErrorKind::kRevisionNotFound},
           Case{404, "EntryNotFound", "Entry not found", HubErrorKind::kEntryNotFound},
           Case{401, "GatedRepo", "restricted", HubErrorKind::kGatedAnonymous},
           Case{403, "GatedRepo", "restricted", HubErrorKind::kGatedNotApproved},
           Case{403, "", "Access to this resource is disabled.", HubErrorKind::kDisabled},
           Case{401, "", "Invalid username or password.", HubErrorKind::kNotFound},
           Case{404, "RepoNotFound", "Repository not found", HubErrorKind::kNotFound},
           Case{401, "", "Invalid credentials in Authorization header",
                HubErrorKind::kUnauthorized},
           Case{429, "", "", HubErrorKind::kRateLimited},
           Case{503, "", "", HubErrorKind::kTransient},
           Case{408, "", "", HubErrorKind::kTransient},
           Case{400, "", "bad expand", HubErrorKind::kBadRequest},
           Case{403, "", "other", HubErrorKind::kForbidden},
           Case{416, "", "", HubErrorKind::kProtocol},
           Case{418, "", "", HubErrorKind::kUnexpectedStatus},
       }) {
    HubError e = ErrorFromResponse(response(c.status, c.code, c.message), "http://127.0.0.1/x");
    EXPECT_EQ(e.kind, c.kind) << c.status << " " << c.code << " " << c.message;
    EXPECT_EQ(e.http_status, c.status);
    EXPECT_EQ(e.error_code, c.code);
    EXPECT_EQ(e.error_message, c.message);
  }
}

TEST(InMemoryEtagCache, StoresAndEvictsOldestPastTheBudget) {
  InMemoryEtagCache cache(10);
  cache.Store("a", {"\"1\"", "12345", {}});
  cache.Store("b", {"\"2\"", "12345", {}});
  EXPECT_EQ(cache.Lookup("a")->etag, "\"1\"");
  cache.Store("c", {"\"3\"", "123", {}});
  EXPECT_FALSE(cache.Lookup("a"));
  EXPECT_EQ(cache.Lookup("b")->body, "12345");
  EXPECT_EQ(cache.Lookup("c")->body, "123");
  cache.Store("b", {"\"4\"", "x", {}});
  EXPECT_EQ(cache.Lookup("b")->etag, "\"4\"");
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace hubwatch::hub
