// fakehub --fixtures DIR [--host 127.0.0.1] [--port N] [--cdn-host 127.0.0.2] [--cdn-port N]
//         [--mode static|replay] [--speed X] [--replay-start ISO] [--synthetic N]
//         [--api-quota N] [--resolvers-quota N] [--token TOKEN[:user[:unapproved]]]...
// Prints "fakehub listening on http://HOST:PORT" once ready, then serves until SIGINT/SIGTERM.

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "tests/fakehub/fakehub.h"
#include "tests/fakehub/synthetic.h"

namespace {

int Usage(const std::string& why) {
  std::cerr << "fakehub: " << why << "\n"
            << "usage: fakehub --fixtures DIR [--host H] [--port N] [--cdn-host H] [--cdn-port N]\n"
            << "               [--mode static|replay] [--speed X] [--replay-start ISO]\n"
            << "               [--synthetic N] [--api-quota N] [--resolvers-quota N]\n"
            << "               [--token TOKEN[:USER[:unapproved]]] [--relative-links]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hubwatch::fakehub;
  FakeHubOptions options;
  int synthetic = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        Usage(arg + " needs a value");
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (arg == "--fixtures")
        options.fixtures_dir = value();
      else if (arg == "--host")
        options.host = value();
      else if (arg == "--port")
        options.port = static_cast<uint16_t>(std::stoi(value()));
      else if (arg == "--cdn-host")
        options.cdn_host = value();
      else if (arg == "--cdn-port")
        options.cdn_port = static_cast<uint16_t>(std::stoi(value()));
      else if (arg == "--speed")
        options.speed = std::stod(value());
      else if (arg == "--synthetic")
        synthetic = std::stoi(value());
      else if (arg == "--api-quota")
        options.api_quota = std::stoll(value());
      else if (arg == "--resolvers-quota")
        options.resolvers_quota = std::stoll(value());
      else if (arg == "--relative-links")
        options.relative_links = true;
      else if (arg == "--replay-start") {
        auto t = ParseIsoTime(value());
        if (!t) return Usage("--replay-start wants 2024-04-18T00:00:00Z");
        options.replay_start = *t;
      } else if (arg == "--mode") {
        const std::string mode = value();
        if (mode == "static")
          options.mode = Mode::kStatic;
        else if (mode == "replay")
          options.mode = Mode::kReplay;
        else
          return Usage("--mode is static or replay");
      } else if (arg == "--token") {
        const std::string spec = value();
        FakeUser user;
        const size_t c1 = spec.find(':');
        user.token = spec.substr(0, c1);
        user.name = "fakehub-user";
        if (c1 != std::string::npos) {
          const size_t c2 = spec.find(':', c1 + 1);
          user.name =
              spec.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
          user.approved_for_gated = c2 == std::string::npos || spec.substr(c2 + 1) != "unapproved";
        }
        options.users.push_back(user);
      } else if (arg == "--help" || arg == "-h") {
        Usage("help");
        return 0;
      } else {
        return Usage("unknown argument " + arg);
      }
    } catch (const std::exception&) {
      return Usage("bad value for " + arg);
    }
  }
  if (options.fixtures_dir.empty() && synthetic == 0)
    return Usage("--fixtures or --synthetic is required");
  if (synthetic > 0) {
    SyntheticOptions s;
    s.repos = synthetic;
    options.extra_repos = GenerateSyntheticRepos(s);
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // the server thread inherits the mask

  auto hub = FakeHub::Start(std::move(options));
  if (!hub.ok()) {
    std::cerr << "fakehub: " << hub.error().message << "\n";
    return 1;
  }
  std::cout << "fakehub listening on " << (*hub)->endpoint() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  (*hub)->Stop();
  return 0;
}
