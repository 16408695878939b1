#include "daemon/app/service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>

#include "daemon/api/api_server.h"
#include "daemon/app/config_applier.h"
#include "daemon/app/loop_control.h"
#include "daemon/app/poll_wiring.h"
#include "daemon/app/prepared_config.h"
#include "daemon/app/reloader.h"
#include "daemon/service/metrics.h"
#include "daemon/service/notify.h"
#include "daemon/schedule/poll_loop.h"
#include "daemon/schedule/poll_metrics.h"
#include "daemon/api/service_control.h"
#include "daemon/service/service_etag_cache.h"
#include "daemon/service/signals.h"
#include "daemon/service/status_reporter.h"
#include "daemon/service/store_access.h"
#include "daemon/service/store_gauges.h"
#include "daemon/subscriptions/webhooks.h"
#include "tracker/hub/asio_clock.h"
#include "tracker/hub/client.h"
#include "tracker/hub/hub_settings.h"
#include "tracker/pipeline/poller.h"

namespace hubwatch::app {
namespace {

constexpr auto kStopDeadline = std::chrono::seconds(9);

std::string ListenHost(const std::string& listen) { return listen.substr(0, listen.rfind(':')); }

}  // namespace

// The wiring: opens the store, builds the hub client, the poller, the webhooks and the API on
// one io_context, and runs it; starts and stops them in order. The poll loop, the status
// reporter and the reloader do the rest.
class Service::Impl {
 public:
  Impl(ServiceOptions options, const service::Notifier& notifier)
      : options_(std::move(options)),
        notify_(notifier),
        log_(options_.logger),
        signals_(io_, SIGTERM, SIGINT, SIGHUP),
        deadline_(io_),
        timers_(options_.timers ? options_.timers(io_) : hub::MakeAsioClock(io_)),
        loop_(io_, *timers_, log_, poll_metrics_,
              {.published = [this] { OnPublished(); },
               .drained = [this] { OnDrained(); },
               .scheduled = [this](const std::string& repo, int64_t at) {
                 RecordNextPoll(repo, at);
               }}) {}

  int Run() {
    // signals_ has installed its handlers: a signal is now queued for it, not fatal.
    service::UnblockServiceSignals();

    // Moved, not copied: at 10,000 repos a copy of the repo list is ~1.6 MiB of peak heap.
    const std::string config_path = options_.config.path;
    Result<PreparedConfig> prepared = PrepareConfig(std::move(options_.config));
    if (!prepared.ok()) return Fatal(prepared.error());
    started_ = std::make_unique<PreparedConfig>(std::move(prepared).value());
    const config::DaemonConfig& config = started_->config;
    Result<std::unique_ptr<service::ThreadedStoreAccess>> access =
        service::ThreadedStoreAccess::Open(io_, config.store,
                                           {.cache_kib = service::kDaemonPageCacheKib});
    if (!access.ok()) return Fatal(access.error());
    store_ = std::move(access).value();
    service::RefreshStoreGaugesAtEveryScrape(metrics_, *store_);
    log_->info("store {} open (schema version {})", config.store, store::Store::SchemaVersion());
    webhooks_ = std::make_unique<subscriptions::Webhooks>(
        io_, *store_, metrics_, [this](std::string_view line) { log_->info("{}", line); });

    const hub::HubSettings& settings = started_->hub;
    has_token_ = !settings.token.empty();
    log_->info("hub {} ({})", settings.endpoint,
               has_token_ ? "token from " + settings.token_source : std::string("anonymous"));
    const std::string hub_url = settings.endpoint;
    hub_ = std::make_unique<hub::HubStack>(
        io_, HubClientOptionsFor(config, settings, log_),
        std::make_unique<service::ServiceEtagCache>(*store_, clock_));
    // The Hub counters are current at every scrape, not only when a poll ends: a stalled or
    // retrying poll shows its requests and waits at once, and a scrape that sees a revision
    // also sees the requests that fetched it. The API renders on this (the network) thread,
    // where the client's accounting is written.
    // So is the tracked repos' gauge: follow rules track and untrack repos in rounds of their
    // own, and the scheduler is the one count of what is polled.
    metrics_.BeforeRender([this] {
      if (hub_) poll_metrics_.SyncHub(hub_->client().accounting());
      control_.UpdateRepoGauge();
    });

    applier_ = std::make_unique<ConfigApplier>(ConfigApplier::Parts{
        .clock = &clock_,
        .timers = timers_.get(),
        .log = log_,
        .metrics = &metrics_,
        .loop = &loop_,
        .store = store_.get(),
        .hub = &hub_->client(),
        .webhooks = webhooks_.get(),
        .control = &control_,
        .has_token = has_token_,
        .published = [this] { OnPublished(); }});

    control_.SetFollowHooks(
        [this](const std::vector<std::string>& untracked) {
          applier_->FollowRulesChanged(untracked);
        },
        [this](const std::string& rule) { return applier_->FollowRuntime(rule); },
        webhooks_->follow_targets());

    // The listener first: a start that cannot bind (the port taken) writes nothing. Nothing is
    // served before the loop runs, and /readyz says not ready until the start is done.
    if (Status s = StartApi(config, hub_url); !s.ok()) return Fatal(s.error());
    // The start writes the configuration as a reload does, and waits for it.
    auto wrote = std::make_shared<ConfigWrite>();
    if (Status s =
            Await([&](auto done) { applier_->WriteToStore(*started_, wrote, std::move(done)); });
        !s.ok()) {
      return Fatal(s.error());
    }
    applier_->Apply(*started_, *wrote);
    wrote.reset();  // every repo's schedule: applied, not needed again (8 MB at 100,000 repos)

    reloader_ = std::make_unique<Reloader>(
        [this, config_path]() -> Result<config::DaemonConfig> {
          return options_.reload ? options_.reload() : config::LoadConfig(config_path);
        },
        *started_, *applier_, notify_, metrics_, log_);
    status_ = std::make_unique<service::StatusReporter>(*timers_, notify_, metrics_, loop_,
                                                        store_->reads());
    signals_.async_wait([this](auto ec, int sig) { OnSignal(ec, sig); });
    loop_.Start(hub_->client(), applier_->poller());
    applier_->StartBackgroundReads(config);
    // The repo list is applied; what the start keeps is what a reload compares (the keys that
    // need a restart) and none of it is a repo: 20 MB at 100,000 repos.
    started_->config.repos = {};
    status_->Start();
    control_.SetReady();
    (void)notify_.Ready();
    log_->info("ready: watching {} repos every {} s; API on {}:{}", loop_.scheduler().size(),
               loop_.scheduler().options().interval_s, ListenHost(config.api.listen),
               api_port_.load());
    io_.run();
    api_.reset();
    webhooks_.reset();
    store_->Shutdown();
    log_->info("stopped");
    return 0;
  }

  void Stop() {
    boost::asio::post(io_, [this] { BeginStop("stop requested"); });
  }

  uint16_t api_port() const { return api_port_.load(); }

 private:
  // The scheduler's decision, in the store: a write nobody waits for (lost, the repo is due
  // again sooner after a restart, never later).
  void RecordNextPoll(const std::string& repo, int64_t at) {
    store_->WriteSoon([repo, at](store::Store& w) { return w.repos().SetNextPoll(repo, at); });
  }
  // Exit status 2 for bad input (the configuration), 1 for anything else.
  int Fatal(const Error& why) {
    log_->error("{}", why.message);
    (void)notify_.Send("STATUS=failed: " + why.message);
    api_.reset();
    if (webhooks_) webhooks_->Stop();
    webhooks_.reset();
    if (store_) store_->Shutdown();
    return why.code == ErrorCode::kInvalidInput ? 2 : 1;
  }

  // Runs the loop until `start`'s completion is called. Startup only, before io_.run(): never
  // from a handler (it would restart and re-enter the running loop).
  template <class Start>
  Status Await(Start start) {
    std::optional<Status> done;
    start([&done](Status s) { done = s; });
    while (!done) {
      io_.restart();  // run_one() stops the context when it runs out of work
      io_.run_one();
    }
    io_.restart();
    return *done;
  }

  Status StartApi(const config::DaemonConfig& config, const std::string& hub_url) {
    const std::optional<std::string>& admin = started_->admin_token;
    api::ApiDeps deps;
    deps.io = &io_;
    deps.store = store_.get();
    deps.metrics = &metrics_;
    deps.control = &control_;
    deps.subscriptions = webhooks_->handler();
    deps.admin_token = admin;
    deps.hub_webhook_secret = started_->hub_webhook_secret;
    deps.hub_url = hub_url;
    deps.clock = &clock_;
    // The heavy read-only routes run on the API's read pool, each worker on a connection of its
    // own (WAL: readers never block the store thread's writes).
    // Their page caches as small as the store thread's: SQLite's default 2,000 KiB each filled
    // up under the pages of 100,000 repos.
    deps.open_reader = [path = config.store] {
      return store::Store::Open(path, {.cache_kib = service::kDaemonPageCacheKib});
    };
    Result<std::unique_ptr<api::ApiServer>> api = api::ApiServer::Start(config.api, deps);
    if (!api.ok()) return Error::Io("API on " + config.api.listen + ": " + api.error().message);
    api_ = std::move(api).value();
    api_port_ = api_->port();
    if (!admin) log_->info("admin endpoints disabled: no admin_token_file in the config");
    return Status::Ok();
  }

  void OnPublished() {
    if (api_) api_->OnNewAdvisories();
    if (webhooks_) webhooks_->Kick();
  }

  void OnSignal(const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      reloader_->Reload();
      signals_.async_wait([this](auto e, int s) { OnSignal(e, s); });
      return;
    }
    BeginStop(sig == SIGTERM ? "SIGTERM" : "SIGINT");
  }

  // SIGTERM/SIGINT: no new polls; in-flight ones are abandoned (a revision is committed whole or
  // not at all); the store thread drains; the loop ends within kStopDeadline.
  void BeginStop(const std::string& why) {
    if (control_.stopping()) return;
    control_.SetStopping();
    (void)notify_.Stopping();
    log_->info("{}: stopping ({} poll(s) in flight are abandoned; nothing half-written)", why,
               loop_.polls_in_flight());
    signals_.cancel();
    if (status_) status_->Stop();
    if (api_) api_->Stop();
    if (applier_) applier_->StopBackgroundReads();
    webhooks_->Stop();
    hub_->client().Shutdown();
    deadline_.expires_after(kStopDeadline);
    deadline_.async_wait([this](auto ec) {
      if (ec) return;
      log_->warn("stop deadline reached with {} poll(s) unfinished", loop_.polls_in_flight());
      io_.stop();
    });
    loop_.Stop();
  }

  // The last poll ended after BeginStop: let queued writes land (they post their completions
  // here), then leave the loop.
  void OnDrained() {
    deadline_.cancel();
    store_->Write([](store::Store&) { return Status::Ok(); }, [this](Status) { io_.stop(); });
  }

  ServiceOptions options_;
  const Clock& clock_ = *options_.clock;
  // What the service started with: the keys that need a restart keep these values.
  std::unique_ptr<PreparedConfig> started_;
  const service::Notifier& notify_;
  std::shared_ptr<spdlog::logger> log_;
  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer deadline_;  // real time: the stop's safety net, whatever the clock
  std::unique_ptr<TimerClock> timers_;  // the daemon's: outlives everything that sets them
  service::Metrics metrics_;
  schedule::PollMetrics poll_metrics_{metrics_, clock_};
  schedule::PollLoop loop_;
  std::unique_ptr<service::ThreadedStoreAccess> store_;
  std::unique_ptr<hub::HubStack> hub_;
  std::unique_ptr<ConfigApplier> applier_;  // the poller, the listing, the derivatives' watch
  std::unique_ptr<subscriptions::Webhooks> webhooks_;
  std::unique_ptr<api::ApiServer> api_;
  std::unique_ptr<Reloader> reloader_;
  std::unique_ptr<service::StatusReporter> status_;
  std::atomic<uint16_t> api_port_{0};
  LoopControl control_{loop_, metrics_};  // the API's hold on the service
  bool has_token_ = false;
};

Service::Service(ServiceOptions options, const service::Notifier& notifier)
    : impl_(std::make_unique<Impl>(std::move(options), notifier)) {}
Service::~Service() = default;
int Service::Run() { return impl_->Run(); }
void Service::Stop() { impl_->Stop(); }
uint16_t Service::api_port() const { return impl_->api_port(); }

}  // namespace hubwatch::app
