// fakehub --fixtures DIR [--fixtures DIR]... [--host 127.0.0.1] [--port N]
//         [--cdn-host 127.0.0.2] [--cdn-port N]
//         [--mode static|replay] [--speed X] [--replay-start ISO] [--synthetic N [--owners K]]
//         [--synthetic-commits C] [--synthetic-tensors T]
//         [--churn PER_MINUTE] [--webhook URL [--webhook-secret S]]
//         [--api-quota N] [--resolvers-quota N] [--token TOKEN[:user[:unapproved]]]...
//         [--relative-links] [--public-hub-url URL] [--public-cdn-url URL]
// Prints "fakehub listening on http://HOST:PORT" once ready, then serves until SIGINT/SIGTERM.
// --fixtures DIR     repeatable: the repos of every DIR are served together (a repo id defined
//                    in two of them does not load).
// --synthetic N      N generated repos, "synthetic/model-XXXXX" (synthetic.h); with --owners K,
//                    "owner-XXXX/model-XXXXX" over K owners with Zipf-skewed sizes (K <= N).
// --synthetic-commits C  commits per synthetic repo (default 3; 1: one ingest reads one revision)
// --synthetic-tensors T  tensors in each synthetic model.safetensors (default 8; 0: no weights
//                    file, so an ingest makes no CDN range read)
// --churn R          R background repos per minute get a new head (churn.h): the Hub-wide
//                    listing is as noisy as the real Hub's. Listing only; R <= 1,000,000.
// --webhook URL      POST a Hub webhook to URL (http://127.x.y.z:PORT/path only) when a main
//                    head changes (replay clock, push, super-squash), a repo is renamed or
//                    deleted; X-Webhook-Secret: S. Deliveries show in GET /_fakehub/log.
// --public-hub-url, --public-cdn-url  the origins clients use when a front (a TLS proxy such as
//                    nghttpx) stands before the Hub or CDN listener, e.g. https://127.0.0.1:8443:
//                    every absolute URL fakehub writes (Link, Location, webhook payloads) points
//                    there. Loopback only. The listeners themselves stay cleartext HTTP/1.1.
// Control: POST /_fakehub/repos/{ns}/{name}/commit {"files": {"path": "text"}, "title": "..."}
// pushes a commit on main now (hub_events.cc); see hub_control.cc for the rest of /_fakehub/.

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
            << "usage: fakehub --fixtures DIR [--fixtures DIR]... [--host H] [--port N]\n"
            << "               [--cdn-host H] [--cdn-port N]\n"
            << "               [--mode static|replay] [--speed X] [--replay-start ISO]\n"
            << "               [--synthetic N [--owners K]] [--churn PER_MINUTE]\n"
            << "               [--synthetic-commits C] [--synthetic-tensors T]\n"
            << "               [--webhook http://127.0.0.1:PORT/PATH [--webhook-secret S]]\n"
            << "               [--api-quota N] [--resolvers-quota N]\n"
            << "               [--token TOKEN[:USER[:unapproved]]] [--relative-links]\n"
            << "               [--public-hub-url URL] [--public-cdn-url URL]\n"
            << "  --fixtures DIR  repeatable: every DIR's repos, served together\n"
            << "  --synthetic N   N generated repos (synthetic/model-XXXXX); with --owners K,\n"
            << "                  owner-XXXX/model-XXXXX over K owners, Zipf-skewed sizes\n"
            << "  --synthetic-commits C, --synthetic-tensors T   commits per synthetic repo\n"
            << "                  (default 3) and tensors in its weights file (default 8, 0: none)\n"
            << "  --churn R       R untracked background repos per minute get a new head\n"
            << "                  (listed only, on the replay clock; wall clock when static)\n"
            << "  --webhook URL   Hub webhooks for new main heads, renames and deletions,\n"
            << "                  sent to a 127.0.0.0/8 URL with X-Webhook-Secret\n"
            << "  --public-hub-url, --public-cdn-url URL   origins of TLS fronts before the\n"
            << "                  listeners (https://127.0.0.1:PORT): absolute links use them\n"
            << "  push a commit:  POST /_fakehub/repos/NS/NAME/commit {\"files\": {...}}\n"
            << "  spam children:  POST /_fakehub/spam {\"upstream\": ID, \"count\": N,\n"
            << "                  \"relation\": \"adapter\"} (no downloads or likes, dated now)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hubwatch::fakehub;
  FakeHubOptions options;
  int synthetic = 0;
  int owners = 0;
  SyntheticOptions s;
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
        options.fixtures_dirs.push_back(value());
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
      else if (arg == "--owners")
        owners = std::stoi(value());
      else if (arg == "--synthetic-commits")
        s.commits = std::stoi(value());
      else if (arg == "--synthetic-tensors")
        s.tensors_per_file = std::stoi(value());
      else if (arg == "--churn")
        options.churn_per_minute = std::stod(value());
      else if (arg == "--webhook")
        options.webhook_url = value();
      else if (arg == "--webhook-secret")
        options.webhook_secret = value();
      else if (arg == "--api-quota")
        options.api_quota = std::stoll(value());
      else if (arg == "--resolvers-quota")
        options.resolvers_quota = std::stoll(value());
      else if (arg == "--public-hub-url")
        options.public_hub_url = value();
      else if (arg == "--public-cdn-url")
        options.public_cdn_url = value();
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
  if (options.fixtures_dirs.empty() && synthetic == 0)
    return Usage("--fixtures or --synthetic is required");
  if (owners < 0 || (owners > 0 && owners > synthetic))
    return Usage("--owners K needs --synthetic N with 0 < K <= N");
  if (!(options.churn_per_minute >= 0 && options.churn_per_minute <= 1e6))
    return Usage("--churn is 0 to 1000000 changes per minute");
  if (s.commits < 1 || s.tensors_per_file < 0)
    return Usage("--synthetic-commits is at least 1, --synthetic-tensors at least 0");
  if (synthetic > 0) {
    s.repos = synthetic;
    s.owners = owners;
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
