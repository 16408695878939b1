// hubwatch poll-once: one full cycle over every configured repo.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>

#include "daemon/cli_common.h"
#include "daemon/commands.h"
#include "estimator/base/clock.h"
#include "estimator/base/text.h"
#include "tracker/diff/terminal_text.h"
#include "tracker/hub/client.h"
#include "tracker/hub/hub_settings.h"
#include "tracker/pipeline/poller.h"
#include "tracker/pipeline/store_etag_cache.h"

namespace hubwatch::cli {
namespace {

constexpr const char kUsage[] = R"(usage: hubwatch poll-once --config FILE [--json]

Polls every repo of the configuration once: the refs of each (one request when nothing moved),
then every new revision oldest first - files, diffs, estimate, advisories - into the store.
Prints one line per repo; exit status 1 if any repo failed, 2 for a bad configuration.

The Hub is hub.endpoint, else $HF_ENDPOINT, else https://huggingface.co. The token is
hub.token_file, else $HF_TOKEN, else the file $HF_TOKEN_PATH (default
~/.cache/huggingface/token). $HF_HUB_OFFLINE=1 sends nothing and fails every repo.
)";

std::string Megabytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

}  // namespace

int RunPollOnce(const Args& args, std::ostream& out, std::ostream& err) {
  CommonFlags flags;
  std::vector<std::string> positional;
  if (Status s = ParseCommon(args, flags, positional, {}); !s.ok())
    return Fail(err, "poll-once", s);
  if (flags.help) {
    out << kUsage;
    return 0;
  }
  if (!positional.empty()) {
    return Fail(err, "poll-once",
                Error::InvalidInput("unexpected argument " + Clip(positional[0])));
  }
  Result<Opened> opened = OpenStoreFromConfig(flags);
  if (!opened.ok()) return Fail(err, "poll-once", opened.error());
  config::DaemonConfig& config = opened->config;
  store::Store& store = *opened->store;
  if (config.repos.empty()) {
    return Fail(err, "poll-once", Error::InvalidInput(config.path + ": no repos to poll"));
  }
  const int64_t now = SystemClock().UnixSeconds();
  for (const config::RepoConfig& r : config.repos) {
    store::RepoRecord record;
    record.id = r.id;
    record.refs = r.refs;
    record.added_at = now;
    if (Status s = store.repos().AddRepo(record); !s.ok()) return Fail(err, "poll-once", s);
  }
  Result<hub::HubSettings> settings = config::HubSettingsFor(config);
  if (!settings.ok()) return Fail(err, "poll-once", settings.error());

  boost::asio::io_context io;
  hub::HubClientOptions client_options;
  client_options.settings = std::move(settings).value();
  client_options.max_safetensors_header_bytes = config.hub.max_safetensors_header_bytes;
  // Upstream text (commit titles, Hub error bodies) reaches these lines: escaped for the terminal.
  client_options.log = [&err](std::string_view line) {
    err << "hubwatch: hub: " << diff::EscapeForTerminal(line) << "\n";
  };
  hub::HubStack stack(io, std::move(client_options),
                      std::make_unique<pipeline::StoreEtagCache>(store, SystemClock()));
  pipeline::PollerOptions poller_options;
  poller_options.advise_cosmetic = config.poll.advise_cosmetic;
  poller_options.log = [&err](std::string_view line) {
    err << "hubwatch: " << diff::EscapeForTerminal(line) << "\n";
  };
  pipeline::Poller poller(stack.client(), store, poller_options);

  // Repos in parallel, up to hub.max_concurrent at a time; each repo's revisions in order.
  std::vector<pipeline::PollReport> reports(config.repos.size());
  size_t next = 0, finished = 0, running = 0;
  std::function<void()> launch = [&] {
    while (running < static_cast<size_t>(config.hub.max_concurrent) && next < config.repos.size()) {
      const size_t i = next++;
      ++running;
      poller.Poll(config.repos[i].id, [&, i](pipeline::PollReport r) {
        reports[i] = std::move(r);
        --running;
        ++finished;
        launch();
      });
    }
  };
  launch();
  while (finished < config.repos.size()) {
    io.restart();
    io.run_one();
  }

  int failed = 0;
  nlohmann::json summary = nlohmann::json::array();
  for (const pipeline::PollReport& r : reports) {
    failed += !r.ok;
    if (flags.json) {
      summary.push_back({{"repo", r.repo},
                         {"ok", r.ok},
                         {"error", r.error},
                         {"state", store::RepoStateName(r.state)},
                         {"never_seen", r.never_seen},
                         {"head_moved", r.head_moved},
                         {"history_rewritten", r.history_rewritten},
                         {"revisions", r.revisions},
                         {"changes", r.changes},
                         {"advisories", r.advisories},
                         {"requests", r.stats.requests},
                         {"bytes_received", r.stats.bytes_received}});
      continue;
    }
    out << r.repo << ": ";
    if (!r.ok) {
      out << (r.never_seen ? "not found" : store::RepoStateName(r.state)) << ": "
          << diff::EscapeForTerminal(r.error);
    } else if (!r.head_moved) {
      out << "unchanged";
    } else {
      out << r.revisions << " new revision(s), " << r.changes << " change(s), " << r.advisories
          << " advisory(ies)" << (r.history_rewritten ? ", history rewritten" : "");
    }
    out << " (" << r.stats.requests << " requests, " << Megabytes(r.stats.bytes_received) << ")\n";
  }
  // Hub errors may quote upstream bytes: invalid UTF-8 is replaced, never thrown.
  if (flags.json) {
    out << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return failed ? 1 : 0;
}

}  // namespace hubwatch::cli
