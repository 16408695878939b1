#include "service.h"

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
#include "daemon/subscriptions/webhooks.h"
#include "metrics.h"
#include "notify.h"
#include "poll_metrics.h"
#include "scheduler.h"
#include "service_control.h"
#include "service_etag_cache.h"
#include "store_access.h"
#include "tracker/hub/client.h"
#include "tracker/hub/hub_settings.h"
#include "tracker/pipeline/poller.h"

namespace hubwatch::service {
namespace {

constexpr auto kStopDeadline = std::chrono::seconds(9);
constexpr auto kStatusEvery = std::chrono::seconds(10);
constexpr int64_t kMaxSleepS = 60;

int64_t WallNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// 80% of the Hub's documented API quota (per 5 minutes): 500 anonymous, 1000 with a token.
int64_t DefaultQuota(bool has_token) { return has_token ? 800 : 400; }

}  // namespace

class Service::Impl final : public ServiceControl {
 public:
  Impl(ServiceOptions options, const Notifier& notifier)
      : options_(std::move(options)),
        notify_(notifier),
        log_(options_.logger),
        signals_(io_, SIGTERM, SIGINT, SIGHUP),
        tick_(io_),
        watchdog_(io_),
        status_(io_),
        deadline_(io_),
        scheduler_(SchedulerOptions{}) {}

  int Run() {
    const cli::DaemonConfig& config = options_.config;
    Result<std::unique_ptr<ThreadedStoreAccess>> access =
        ThreadedStoreAccess::Open(io_, config.store);
    if (!access.ok()) return Fatal(access.error().message);
    store_ = std::move(access).value();
    // Read at every scrape (thread-safe counters): a store stuck behind another process's lock
    // shows at once, not at the next status report.
    metrics_.BeforeRender([this, store = store_.get()] {
      metrics_.gauge("hubwatch_store_pending_writes", "writes queued for the store thread")
          .Set(static_cast<double>(store->pending_writes()));
      metrics_
          .gauge("hubwatch_store_busy_seconds",
                 "how long the store thread has been on its current writes (0 when idle)")
          .Set(store->busy_for().count());
      metrics_
          .gauge("hubwatch_store_poll_time_write_failures",
                 "unchanged polls whose poll times could not be written (they are polled again)")
          .Set(static_cast<double>(store->failed_soon_writes()));
    });
    log_->info("store {} open (schema version {})", config.store, store::Store::SchemaVersion());
    webhooks_ = std::make_unique<subscriptions::Webhooks>(
        io_, *store_, metrics_, [this](std::string_view line) { log_->info("{}", line); });

    Result<hub::HubSettings> settings = HubSettings(config);
    if (!settings.ok()) return Fatal(settings.error().message);
    has_token_ = !settings->token.empty();
    log_->info("hub {} ({})", settings->endpoint,
               has_token_ ? "token from " + settings->token_source : std::string("anonymous"));
    hub::HubClientOptions client;
    client.settings = std::move(settings).value();
    client.max_safetensors_header_bytes = config.hub.max_safetensors_header_bytes;
    client.log = [this](std::string_view line) { log_->debug("hub: {}", line); };
    const std::string hub_url = client.settings.endpoint;
    hub_ = std::make_unique<hub::HubStack>(io_, std::move(client),
                                           std::make_unique<ServiceEtagCache>(*store_, &WallNow));
    // The Hub counters are current at every scrape, not only when a poll ends: a stalled or
    // retrying poll shows its requests and waits at once, and a scrape that sees a revision
    // also sees the requests that fetched it. The API renders on this (the network) thread,
    // where the client's accounting is written.
    metrics_.BeforeRender([this] {
      if (hub_) poll_metrics_.SyncHub(hub_->client().accounting());
    });

    ApplyConfig(config);
    if (Status s = SyncRepos(config); !s.ok()) return Fatal(s.error().message);
    if (Status s = Await([&](auto done) { webhooks_->Start(config, std::move(done)); }); !s.ok()) {
      return Fatal(s.error().message);
    }
    if (Status s = StartApi(config, hub_url); !s.ok()) return Fatal(s.error().message);

    signals_.async_wait([this](auto ec, int sig) { OnSignal(ec, sig); });
    Tick();
    StartWatchdog();
    ReportStatus();
    ready_ = true;
    (void)notify_.Ready();
    log_->info("ready: watching {} repos every {} s; API on {}:{}", scheduler_.size(),
               scheduler_.options().interval_s, ListenHost(config.api.listen), api_port_.load());
    io_.run();
    api_.reset();
    webhooks_.reset();
    store_->Shutdown();
    log_->info("stopped");
    return exit_code_;
  }

  void Stop() {
    boost::asio::post(io_, [this] { BeginStop("stop requested"); });
  }

  uint16_t api_port() const { return api_port_.load(); }

  // ServiceControl, for the API (network thread).
  void RepoAdded(const std::string& id) override {
    if (stopping_) return;
    scheduler_.Track(id, 0);
    UpdateRepoGauge();
    RearmTick();
  }
  void RepoRemoved(const std::string& id) override {
    scheduler_.Untrack(id);
    UpdateRepoGauge();
  }
  bool ready() const override { return ready_ && !stopping_; }
  std::string status_line() const override { return StatusLine(); }
  std::vector<RepoSchedule> schedule() const override {
    std::vector<RepoSchedule> out;
    for (const auto& [repo, at] : scheduler_.due()) {
      out.push_back({repo, at, scheduler_.polling(repo)});
    }
    return out;
  }

 private:
  int Fatal(const std::string& why) {
    log_->error("{}", why);
    (void)notify_.Send("STATUS=failed: " + why);
    api_.reset();
    if (webhooks_) webhooks_->Stop();
    webhooks_.reset();
    if (store_) store_->Shutdown();
    return 1;
  }

  // Runs the loop until `start`'s completion is called (startup only, before io_.run()).
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

  static std::string ListenHost(const std::string& listen) {
    return listen.substr(0, listen.rfind(':'));
  }

  Status StartApi(const cli::DaemonConfig& config, const std::string& hub_url) {
    Result<std::optional<std::string>> admin = cli::ReadAdminToken(config);
    if (!admin.ok()) return admin.error();
    api::ApiDeps deps;
    deps.io = &io_;
    deps.store = store_.get();
    deps.metrics = &metrics_;
    deps.control = this;
    deps.subscriptions = webhooks_->handler();
    deps.admin_token = *admin;
    deps.hub_url = hub_url;
    Result<std::unique_ptr<api::ApiServer>> api = api::ApiServer::Start(config.api, deps);
    if (!api.ok()) return Error::Io("API on " + config.api.listen + ": " + api.error().message);
    api_ = std::move(api).value();
    api_port_ = api_->port();
    if (!*admin) log_->info("admin endpoints disabled: no admin_token_file in the config");
    return Status::Ok();
  }

  void UpdateRepoGauge() {
    metrics_.gauge("hubwatch_repos", "tracked repositories")
        .Set(static_cast<double>(scheduler_.size()));
  }

  static Result<hub::HubSettings> HubSettings(const cli::DaemonConfig& config) {
    hub::HubConfig hub_config;
    hub_config.endpoint = config.hub.endpoint;
    Result<std::optional<std::string>> token = cli::ReadTokenFile(config);
    if (!token.ok()) return token.error();
    hub_config.token = *token;
    return hub::LoadHubSettings(hub_config, hub::ProcessEnvironment());
  }

  void ApplyConfig(const cli::DaemonConfig& config) {
    SchedulerOptions s;
    s.interval_s = config.poll.interval_s;
    s.max_concurrent = config.poll.max_concurrent;
    s.quota = config.poll.api_quota ? config.poll.api_quota : DefaultQuota(has_token_);
    s.window_s = config.poll.quota_window_s;
    scheduler_.SetOptions(s);
    pipeline::PollerOptions p;
    p.interval_s = config.poll.interval_s;
    p.advise_cosmetic = config.poll.advise_cosmetic;
    p.settle_window_s = config.poll.settle_window_s;
    p.outbox_targets = webhooks_->outbox_targets();
    p.log = [this](std::string_view line) { log_->info("{}", line); };
    p.offload = [this](std::function<void()> work, std::function<void()> then) {
      store_->Write(
          [work = std::move(work)](store::Store&) {
            work();
            return Status::Ok();
          },
          [then = std::move(then)](Status) { then(); });
    };
    p.writer = &store_->writer();
    p.write_soon = [this](std::function<Status()> work) {
      store_->WriteSoon([work = std::move(work)](store::Store&) { return work(); });
    };
    // Running polls hold a reference to the poller: keep the one object, renew its options.
    if (poller_) {
      poller_->SetOptions(std::move(p));
    } else {
      poller_ = std::make_unique<pipeline::Poller>(hub_->client(), store_->reads(), std::move(p));
    }
  }

  // Adds the config's repos to the store (new ones, or new refs), then tracks every stored repo.
  Status SyncRepos(const cli::DaemonConfig& config) {
    const int64_t now = WallNow();
    Status added = Await([&](auto done) {
      store_->Write(
          [repos = config.repos, now](store::Store& w) -> Status {
            for (const cli::RepoConfig& r : repos) {
              store::RepoRecord record;
              record.id = r.id;
              record.refs = r.refs;
              record.added_at = now;
              if (Status s = w.AddRepo(record); !s.ok()) return s;
            }
            return Status::Ok();
          },
          std::move(done));
    });
    if (!added.ok()) return added;
    Result<std::vector<store::RepoRecord>> repos = store_->reads().ListRepos();
    if (!repos.ok()) return repos.error();
    for (const store::RepoRecord& r : *repos) {
      if (!scheduler_.tracked(r.id)) scheduler_.Track(r.id, r.next_poll_at);
    }
    UpdateRepoGauge();
    return Status::Ok();
  }

  void Tick() {
    if (stopping_) return;
    last_tick_ = std::chrono::steady_clock::now();
    const int64_t now = WallNow();
    for (const std::string& repo : scheduler_.TakeDue(now)) StartPoll(repo);
    const int64_t wake =
        std::min(scheduler_.NextWake(now).value_or(now + kMaxSleepS), now + kMaxSleepS);
    tick_.expires_after(std::chrono::seconds(std::max<int64_t>(1, wake - now)));
    tick_.async_wait([this](auto ec) {
      if (!ec) Tick();
    });
  }

  void StartPoll(const std::string& repo) {
    const auto started = std::chrono::steady_clock::now();
    poller_->Poll(repo, [this, repo, started](pipeline::PollReport r) {
      poll_metrics_.RecordPoll(
          r, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      poll_metrics_.SyncHub(hub_->client().accounting());
      ObserveHubBudget();
      if (!r.ok && !r.abandoned) {
        ++errors_;
        log_->warn("{}: {} ({}), next poll in {} s", repo, r.error,
                   r.never_seen ? "not found" : store::RepoStateName(r.state),
                   r.next_poll_at - WallNow());
      } else if (r.head_moved) {
        log_->info("{}: {} new revision(s), {} change(s), {} advisory(ies){}", repo, r.revisions,
                   r.changes, r.advisories, r.history_rewritten ? ", history rewritten" : "");
      } else {
        log_->debug("{}: unchanged ({} request)", repo, r.stats.requests);
      }
      last_cycle_ = WallNow();
      scheduler_.Finished(
          repo, r.next_poll_at ? r.next_poll_at : WallNow() + scheduler_.options().interval_s,
          r.stats.requests, WallNow());
      // A burst publishes when it settles, not at the repo's next slot.
      const std::optional<int64_t> next = scheduler_.next_poll_at(repo);
      if (r.settles_at && next && *r.settles_at < *next) scheduler_.Track(repo, *r.settles_at);
      if (r.published > 0) {
        if (api_) api_->OnNewAdvisories();
        if (webhooks_) webhooks_->Kick();
      }
      if (stopping_) {
        MaybeFinishStop();
      } else {
        boost::asio::post(io_, [this] { RearmTick(); });
      }
    });
  }

  // The scheduler follows the Hub's RateLimit headers for the api bucket.
  void ObserveHubBudget() {
    const hub::BucketStatus api = hub_->client().bucket_status("api");
    std::optional<int64_t> paused_until;
    if (api.paused_until) {
      const auto left = *api.paused_until - std::chrono::steady_clock::now();
      paused_until = WallNow() + std::chrono::ceil<std::chrono::seconds>(left).count();
    }
    scheduler_.ObserveHub(paused_until, api.quota, api.window_seconds);
  }

  void RearmTick() {
    tick_.cancel();
    Tick();
  }

  void StartWatchdog() {
    const auto interval = notify_.watchdog();
    if (!interval) return;
    watchdog_.expires_after(*interval / 2);
    watchdog_.async_wait([this](auto ec) {
      if (ec || stopping_) return;
      // Only while the scheduler is alive: a wedged tick stops the pings and systemd acts.
      if (std::chrono::steady_clock::now() - last_tick_ < std::chrono::seconds(2 * kMaxSleepS)) {
        (void)notify_.Watchdog();
      }
      StartWatchdog();
    });
  }

  void ReportStatus() {
    if (stopping_) return;
    (void)notify_.StatusLine(StatusLine());
    metrics_.gauge("hubwatch_polls_in_flight", "polls running")
        .Set(static_cast<double>(scheduler_.in_flight()));
    if (Result<int64_t> pending = store_->reads().CountPendingDeliveries(); pending.ok()) {
      metrics_.gauge("hubwatch_outbox_pending", "webhook deliveries not yet delivered or failed")
          .Set(static_cast<double>(*pending));
    }
    if (Result<std::vector<store::Store::HeldBurst>> held = store_->reads().HeldBursts();
        held.ok()) {
      int64_t n = 0;
      for (const store::Store::HeldBurst& b : *held) n += b.advisories;
      metrics_.gauge("hubwatch_advisories_held", "advisories waiting for their burst to settle")
          .Set(static_cast<double>(n));
    }
    status_.expires_after(kStatusEvery);
    status_.async_wait([this](auto ec) {
      if (!ec) ReportStatus();
    });
  }

  std::string StatusLine() const {
    std::string last = last_cycle_ ? std::to_string(WallNow() - last_cycle_) + "s ago" : "none yet";
    return "watching " + std::to_string(scheduler_.size()) + " repos; " +
           std::to_string(scheduler_.in_flight()) + " polling; last poll " + last + "; " +
           std::to_string(errors_) + " errors";
  }

  void OnSignal(const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      Reload();
      signals_.async_wait([this](auto e, int s) { OnSignal(e, s); });
      return;
    }
    BeginStop(sig == SIGTERM ? "SIGTERM" : "SIGINT");
  }

  void Reload() {
    (void)notify_.Reloading();
    log_->info("SIGHUP: reloading {}", options_.config.path);
    Result<cli::DaemonConfig> next =
        options_.reload ? options_.reload() : cli::LoadConfig(options_.config.path);
    if (!next.ok()) {
      log_->error("reload failed, keeping the running configuration: {}", next.error().message);
    } else {
      options_.config = std::move(next).value();
      ApplyConfig(options_.config);
      if (Status s = SyncRepos(options_.config); !s.ok()) {
        log_->error("reload: {}", s.error().message);
      }
      webhooks_->Reload(options_.config, [this](Status s) {
        if (!s.ok()) log_->error("reload: subscriptions unchanged: {}", s.error().message);
      });
      log_->info("reloaded: watching {} repos every {} s", scheduler_.size(),
                 scheduler_.options().interval_s);
      RearmTick();
    }
    (void)notify_.Ready();
    (void)notify_.StatusLine(StatusLine());
  }

  void BeginStop(const std::string& why) {
    if (stopping_) return;
    stopping_ = true;
    (void)notify_.Stopping();
    log_->info("{}: stopping ({} poll(s) in flight are abandoned; nothing half-written)", why,
               scheduler_.in_flight());
    signals_.cancel();
    tick_.cancel();
    watchdog_.cancel();
    status_.cancel();
    if (api_) api_->Stop();
    webhooks_->Stop();
    hub_->client().Shutdown();
    deadline_.expires_after(kStopDeadline);
    deadline_.async_wait([this](auto ec) {
      if (ec) return;
      log_->warn("stop deadline reached with {} poll(s) unfinished", scheduler_.in_flight());
      io_.stop();
    });
    MaybeFinishStop();
  }

  void MaybeFinishStop() {
    if (scheduler_.in_flight() > 0) return;
    deadline_.cancel();
    // Let queued writes land (they post their completions here), then leave the loop.
    store_->Write([](store::Store&) { return Status::Ok(); }, [this](Status) { io_.stop(); });
  }

  ServiceOptions options_;
  const Notifier& notify_;
  std::shared_ptr<spdlog::logger> log_;
  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer tick_, watchdog_, status_, deadline_;
  Metrics metrics_;
  PollMetrics poll_metrics_{metrics_};
  Scheduler scheduler_;
  std::unique_ptr<ThreadedStoreAccess> store_;
  std::unique_ptr<hub::HubStack> hub_;
  std::unique_ptr<pipeline::Poller> poller_;
  std::unique_ptr<subscriptions::Webhooks> webhooks_;
  std::unique_ptr<api::ApiServer> api_;
  std::atomic<uint16_t> api_port_{0};
  bool ready_ = false;
  std::chrono::steady_clock::time_point last_tick_ = std::chrono::steady_clock::now();
  int64_t last_cycle_ = 0;
  int64_t errors_ = 0;
  bool has_token_ = false;
  bool stopping_ = false;
  int exit_code_ = 0;

  friend class Service;
};

Service::Service(ServiceOptions options, const Notifier& notifier)
    : impl_(std::make_unique<Impl>(std::move(options), notifier)) {}
Service::~Service() = default;
int Service::Run() { return impl_->Run(); }
void Service::Stop() { impl_->Stop(); }
uint16_t Service::api_port() const { return impl_->api_port(); }

}  // namespace hubwatch::service
