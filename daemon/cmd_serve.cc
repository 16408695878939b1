// hubwatch serve: the daemon.

#include <ostream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "daemon/app/service.h"
#include "daemon/cli_common.h"
#include "daemon/commands.h"
#include "daemon/service/log.h"
#include "daemon/service/notify.h"

namespace hubwatch::cli {
namespace {

constexpr const char kUsage[] = R"(usage: hubwatch serve --config FILE [--log-format text|json]

Runs the daemon: polls every tracked repo on its schedule, ingests new revisions (changes,
estimates, OSV advisories), and serves the HTTP API (config "listen", default 127.0.0.1:8437).
Logs go to stderr: readable lines, journald priority prefixes under systemd, or JSON.

Signals: SIGTERM / SIGINT stop (exit 0 within 10 s, nothing half-written); SIGHUP reloads the
configuration, checked as a start checks it and applied whole or not at all (repos, intervals,
budget, subscriptions; store, listen, hub, api and log need a restart), keeping all state.
Under systemd (Type=notify) it reports READY, STATUS, WATCHDOG, RELOADING and STOPPING.

Hub webhooks (config hub.webhook_secret_file) queue a poll of the repo they name. The polls
they start may spend poll.webhook_budget_percent (default 25, 0 to 100) of the api budget per
window (poll.api_quota per poll.quota_window_s); beyond it a webhook is dropped (the listing
and the reconcile still find the change). A repo is polled for webhooks at most once per 60 s:
later ones are merged into one poll at the end of that gap.

Exit status: 0 stopped by a signal, 2 a configuration it cannot run, 1 any other failure.
)";

}  // namespace

int RunServe(const Args& args, std::ostream& out, std::ostream& err) {
  CommonFlags flags;
  std::vector<std::string> positional;
  if (Status s = ParseCommon(args, flags, positional, {"--log-format"}); !s.ok()) {
    return Fail(err, "serve", s);
  }
  if (flags.help) {
    out << kUsage;
    return 0;
  }
  if (flags.config.empty())
    return Fail(err, "serve", Error::InvalidInput("--config FILE is required"));
#if defined(__GLIBC__)
  // One malloc arena, set before any thread starts: the threads besides the network thread are
  // mostly idle, and each arena of their own kept ~4 MiB of freed memory resident (VmRSS 32.9 ->
  // 28.9 MiB idle at 10,000 repos; BENCHMARKS.md "Change hints").
  mallopt(M_ARENA_MAX, 1);
  // A fixed mmap threshold: blocks of 128 KiB and more (request bodies, replies, pages) are
  // mapped and unmapped, so one large request leaves nothing resident. glibc's default starts
  // there but rises to the largest block freed so far (up to 32 MiB), after which such blocks
  // come from the heap and stay (SECURITY.md "What a request may cost").
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
  Result<config::DaemonConfig> config = config::LoadConfig(flags.config);
  if (!config.ok()) return Fail(err, "serve", config.error());
  if (flags.values.count("--log-format")) config->log.format = flags.values["--log-format"];
  if (config->log.format != "text" && config->log.format != "json") {
    return Fail(err, "serve", Error::InvalidInput("--log-format must be text or json"));
  }
  auto logger =
      service::MakeLogger(service::ChooseLogFormat(config->log.format), config->log.level);
  if (!logger.ok()) return Fail(err, "serve", logger.error());
  const service::Notifier notifier = service::Notifier::FromEnvironment();
  app::Service svc({std::move(config).value(), *logger, nullptr}, notifier);
  return svc.Run();
}

}  // namespace hubwatch::cli
