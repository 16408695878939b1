// The hubwatch executable given bad configuration: every command answers exit 2 and one short
// line on stderr (never an abort, never the whole offending value), `serve` included; and a
// signal in serve's first milliseconds waits for the service instead of killing it.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/daemon/scratch_dir.h"
#include "tests/daemon/wait_until.h"

namespace {

struct Outcome {
  int status = -1;  // the exit code; 128 + N when killed by signal N
  std::string err;
};

std::string Binary() {
#ifdef HUBWATCH_BINARY
  return HUBWATCH_BINARY;
#else
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "hubwatch").string();
#endif
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class CliServeTest : public hubwatch::testing::ScratchDirTest {
 protected:
  // A configuration `serve` accepts, with `extra` keys added at its top level.
  std::string Config(const std::string& extra = "") {
    return R"({"store": "hubwatch.db", "hub": {"endpoint": "http://127.0.0.1:9"},)"
           R"( "listen": "127.0.0.1:0", "poll": {"interval_s": 3600})" +
           (extra.empty() ? "" : ", " + extra) + "}";
  }

  // Starts `hubwatch args...` with stderr to a file; returns the pid.
  pid_t Spawn(const std::vector<std::string>& args) {
    err_path_ = (dir_ / "stderr").string();
    std::fflush(stdout);  // the child must not write what the parent buffered
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
      std::freopen(err_path_.c_str(), "w", stderr);
      std::freopen("/dev/null", "w", stdout);
      std::vector<char*> argv;
      const std::string binary = Binary();
      argv.push_back(const_cast<char*>(binary.c_str()));
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    return pid;
  }
  static int Wait(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  Outcome Run(const std::vector<std::string>& args) {
    const int status = Wait(Spawn(args));
    return {status, Slurp(err_path_)};
  }

  std::string err_path_;
};

TEST_F(CliServeTest, BadConfigurationIsExitTwoForEveryCommand) {
  const std::string overflow =
      Write("overflow.json", Config(R"("api": {"read_timeout_s": 1e999})"));
  const std::string negative =
      Write("negative.json", Config(R"("webhooks": {"timeout_s": -1e400})"));
  for (const std::string& config : {overflow, negative}) {
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"serve"}, {"poll-once"}, {"history", "a/b"}, {"advisories"}}) {
      std::vector<std::string> args = command;
      args.insert(args.end(), {"--config", config});
      const Outcome o = Run(args);
      EXPECT_EQ(o.status, 2) << command[0] << ": " << o.err;
      EXPECT_NE(o.err.find("not valid JSON"), std::string::npos) << o.err;
    }
  }
}

TEST_F(CliServeTest, ServeRefusesBadInputWithExitTwoAndOneShortLine) {
  std::string huge = R"({"poll": {"interval_s": [)";
  for (int i = 0; i < 1'000'000; ++i) huge += i ? ",0" : "0";
  huge += "]}}";
  const std::string empty_token = Write("empty.token", "\n");
  const std::string secret_dir = (dir_ / "secrets").string();
  std::filesystem::create_directories(secret_dir);
  struct Case {
    std::string config;  // a path
    std::string expect;
  };
  const std::vector<Case> cases = {
      {(dir_ / "missing.json").string(), "No such file"},
      {dir_.string(), "is a directory"},
      {Write("listen.json", R"({"listen": "garbage"})"), "listen must be HOST:PORT"},
      {Write("dir_token.json",
             R"({"store": "hubwatch.db", "hub": {"token_file": ")" + secret_dir + R"("}})"),
       "is a directory"},
      {Write("empty_token.json",
             R"({"store": "hubwatch.db", "hub": {"token_file": ")" + empty_token + R"("}})"),
       "is empty"},
      {Write("store.json", R"({"store": "no/such/dir/hubwatch.db"})"), "does not exist"},
      {Write("webhook.json", Config(R"("subscriptions": [{"url": "http://[::1", "secret_file": ")" +
                                    empty_token + R"("}])")),
       "subscriptions[0].url"},
      {Write("huge.json", huge), "an array of 1000000 element(s)"},
  };
  for (const Case& c : cases) {
    const Outcome o = Run({"serve", "--config", c.config});
    EXPECT_EQ(o.status, 2) << c.config << ": " << o.err;
    EXPECT_NE(o.err.find(c.expect), std::string::npos) << o.err;
    EXPECT_LT(o.err.size(), 400u) << o.err.substr(0, 400);
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
}

// Whether `pid` has exec'ed the hubwatch binary and blocks SIGHUP.
bool BlocksSighup(pid_t pid) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  if (ec || exe != std::filesystem::path(Binary())) return false;
  std::istringstream status(Slurp("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("SigBlk:")) return (std::stoull(line.substr(7), nullptr, 16) & 1) != 0;
  }
  return false;
}

TEST_F(CliServeTest, ASighupInTheFirstMillisecondsDoesNotKillServe) {
  const std::string config = Write("hubwatch.json", Config());
  const pid_t pid = Spawn({"serve", "--config", config});
  // As soon as main() runs: before the fix nothing blocked SIGHUP, and its default action ended
  // the process with 129 until the service had installed its handler.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool blocked = false;
  while (!(blocked = BlocksSighup(pid)) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(blocked) << "serve never blocked SIGHUP";
  kill(pid, SIGHUP);
  bool ready = false;
  std::optional<int> died;  // the exit code of a serve that ended
  hubwatch::testing::WaitUntil(
      [&] {
        ready = Slurp(err_path_).find("ready: watching 0 repos") != std::string::npos;
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
          died = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 0;
        }
        return ready || died;
      },
      std::chrono::seconds(10));
  if (died) FAIL() << "serve died: " << *died << "\n" << Slurp(err_path_);
  EXPECT_TRUE(ready) << Slurp(err_path_);
  kill(pid, SIGTERM);
  EXPECT_EQ(Wait(pid), 0) << Slurp(err_path_);
}

}  // namespace
