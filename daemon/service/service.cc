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
#include "prepared_config.h"
#include "scheduler.h"
#include "service_control.h"
#include "service_etag_cache.h"
#include "signals.h"
#include "store_access.h"
#include "store_gauges.h"
#include "tracker/hub/client.h"
#include "tracker/hub/hub_settings.h"
#include "tracker/pipeline/poller.h"

namespace hubwatch::service {
namespace {

constexpr auto kStopDeadline = std::chrono::seconds(9);
constexpr auto kStatusEvery = std::chrono::seconds(10);
constexpr int64_t kMaxSleepS = 60;

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
    // signals_ has installed its handlers: a signal is now queued for it, not fatal.
    UnblockServiceSignals();

    Result<PreparedConfig> prepared = PrepareConfig(options_.config);
    if (!prepared.ok()) return Fatal(prepared.error());
    started_ = std::make_unique<const PreparedConfig>(std::move(prepared).value());
    const cli::DaemonConfig& config = started_->config;
    Result<std::unique_ptr<ThreadedStoreAccess>> access =
        ThreadedStoreAccess::Open(io_, config.store);
    if (!access.ok()) return Fatal(access.error());
    store_ = std::move(access).value();
    RefreshStoreGaugesAtEveryScrape(metrics_, *store_);
    log_->info("store {} open (schema version {})", config.store, store::Store::SchemaVersion());
    webhooks_ = std::make_unique<subscriptions::Webhooks>(
        io_, *store_, metrics_, [this](std::string_view line) { log_->info("{}", line); });

    const hub::HubSettings& settings = started_->hub;
    has_token_ = !settings.token.empty();
    log_->info("hub {} ({})", settings.endpoint,
               has_token_ ? "token from " + settings.token_source : std::string("anonymous"));
    hub::HubClientOptions client;
    client.settings = settings;
    client.max_safetensors_header_bytes = config.hub.max_safetensors_header_bytes;
    client.log = [this](std::string_view line) { log_->debug("hub: {}", line); };
    const std::string hub_url = client.settings.endpoint;
    hub_ = std::make_unique<hub::HubStack>(io_, std::move(client),
                                           std::make_unique<ServiceEtagCache>(*store_, clock_));
    // The Hub counters are current at every scrape, not only when a poll ends: a stalled or
    // retrying poll shows its requests and waits at once, and a scrape that sees a revision
    // also sees the requests that fetched it. The API renders on this (the network) thread,
    // where the client's accounting is written.
    metrics_.BeforeRender([this] {
      if (hub_) poll_metrics_.SyncHub(hub_->client().accounting());
    });

    // The start writes the configuration as a reload does, and waits for it.
    auto wrote = std::make_shared<ConfigWrite>();
    if (Status s = Await([&](auto done) { WriteToStore(*started_, wrote, std::move(done)); });
        !s.ok()) {
      return Fatal(s.error());
    }
    Apply(*started_, *wrote);
    if (Status s = StartApi(config, hub_url); !s.ok()) return Fatal(s.error());

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

  static std::string ListenHost(const std::string& listen) {
    return listen.substr(0, listen.rfind(':'));
  }

  Status StartApi(const cli::DaemonConfig& config, const std::string& hub_url) {
    const std::optional<std::string>& admin = started_->admin_token;
    api::ApiDeps deps;
    deps.io = &io_;
    deps.store = store_.get();
    deps.metrics = &metrics_;
    deps.control = this;
    deps.subscriptions = webhooks_->handler();
    deps.admin_token = admin;
    deps.hub_url = hub_url;
    deps.clock = &clock_;
    // The heavy read-only routes run on the API's read pool, each worker on a connection of its
    // own (WAL: readers never block the store thread's writes).
    deps.open_reader = [path = config.store] { return store::Store::Open(path); };
    Result<std::unique_ptr<api::ApiServer>> api = api::ApiServer::Start(config.api, deps);
    if (!api.ok()) return Error::Io("API on " + config.api.listen + ": " + api.error().message);
    api_ = std::move(api).value();
    api_port_ = api_->port();
    if (!admin) log_->info("admin endpoints disabled: no admin_token_file in the config");
    return Status::Ok();
  }

  void UpdateRepoGauge() {
    metrics_.gauge("hubwatch_repos", "tracked repositories")
        .Set(static_cast<double>(scheduler_.size()));
  }

  // The scheduler's and the poller's options from `config`; running polls keep their own.
  void ApplyOptions(const cli::DaemonConfig& config) {
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
    p.clock = &clock_;
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

  // Writes what `config` changes in the store (WriteConfig, on the store thread); `done` runs
  // on this thread with its status, `wrote` filled when it is ok.
  void WriteToStore(const PreparedConfig& config, std::shared_ptr<ConfigWrite> wrote,
                    std::function<void(Status)> done) {
    store_->Write(
        [&config, wrote, now = clock_.UnixSeconds()](store::Store& w) -> Status {
          Result<ConfigWrite> r = WriteConfig(w, config, now);
          if (!r.ok()) return r.error();
          *wrote = std::move(r).value();
          return Status::Ok();
        },
        std::move(done));
  }

  // What follows a configuration's store write, in memory: cannot fail.
  void Apply(const PreparedConfig& config, const ConfigWrite& wrote) {
    ApplyOptions(config.config);
    for (const std::string& id : wrote.untracked) {
      scheduler_.Untrack(id);
      log_->info("{}: untracked, the configuration no longer lists it", id);
    }
    for (const store::RepoRecord& r : wrote.repos) {
      if (!scheduler_.tracked(r.id)) scheduler_.Track(r.id, r.next_poll_at);
    }
    UpdateRepoGauge();
    webhooks_->Apply(config.config.webhooks, wrote.all_subscriptions, wrote.subscriptions);
  }

  void Tick() {
    if (stopping_) return;
    last_tick_ = clock_.Now();
    const int64_t now = clock_.UnixSeconds();
    for (const std::string& repo : scheduler_.TakeDue(now)) StartPoll(repo);
    const int64_t wake =
        std::min(scheduler_.NextWake(now).value_or(now + kMaxSleepS), now + kMaxSleepS);
    tick_.expires_after(std::chrono::seconds(std::max<int64_t>(1, wake - now)));
    tick_.async_wait([this](auto ec) {
      if (!ec) Tick();
    });
  }

  void StartPoll(const std::string& repo) {
    const auto started = clock_.Now();
    poller_->Poll(repo, [this, repo, started](pipeline::PollReport r) {
      poll_metrics_.RecordPoll(r, std::chrono::duration<double>(clock_.Now() - started).count());
      poll_metrics_.SyncHub(hub_->client().accounting());
      ObserveHubBudget();
      if (!r.ok && !r.abandoned) {
        ++errors_;
        log_->warn("{}: {} ({}), next poll in {} s", repo, r.error,
                   r.never_seen ? "not found" : store::RepoStateName(r.state),
                   r.next_poll_at - clock_.UnixSeconds());
      } else if (r.head_moved) {
        log_->info("{}: {} new revision(s), {} change(s), {} advisory(ies){}", repo, r.revisions,
                   r.changes, r.advisories, r.history_rewritten ? ", history rewritten" : "");
      } else {
        log_->debug("{}: unchanged ({} request)", repo, r.stats.requests);
      }
      last_cycle_ = clock_.UnixSeconds();
      scheduler_.Finished(
          repo,
          r.next_poll_at ? r.next_poll_at : clock_.UnixSeconds() + scheduler_.options().interval_s,
          r.stats.requests, clock_.UnixSeconds());
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
      const auto left = *api.paused_until - clock_.Now();
      paused_until = clock_.UnixSeconds() + std::chrono::ceil<std::chrono::seconds>(left).count();
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
      if (clock_.Now() - last_tick_ < std::chrono::seconds(2 * kMaxSleepS)) {
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
    ReportStoreContents(metrics_, store_->reads());
    status_.expires_after(kStatusEvery);
    status_.async_wait([this](auto ec) {
      if (!ec) ReportStatus();
    });
  }

  std::string StatusLine() const {
    std::string last =
        last_cycle_ ? std::to_string(clock_.UnixSeconds() - last_cycle_) + "s ago" : "none yet";
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

  // SIGHUP: the configuration file validated as a start validates it (PrepareConfig), its
  // store changes written in one transaction, then applied; on any failure nothing changes. A
  // SIGHUP during a reload runs another once this one ends.
  void Reload() {
    if (reloading_) {
      reload_again_ = true;
      return;
    }
    (void)notify_.Reloading();
    log_->info("SIGHUP: reloading {}", options_.config.path);
    Result<cli::DaemonConfig> read =
        options_.reload ? options_.reload() : cli::LoadConfig(options_.config.path);
    Result<PreparedConfig> next =
        read.ok() ? PrepareConfig(std::move(read).value()) : Result<PreparedConfig>(read.error());
    if (!next.ok()) {
      log_->error("reload rejected, the running configuration stays: {}", next.error().message);
      return EndReload("rejected");
    }
    if (std::vector<std::string> keys = KeysNeedingRestart(*started_, *next); !keys.empty()) {
      std::string list;
      for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
      log_->warn("reload: {} changed; the new value(s) take effect at the next restart", list);
    }
    reloading_ = true;
    auto config = std::make_shared<const PreparedConfig>(std::move(next).value());
    auto wrote = std::make_shared<ConfigWrite>();
    WriteToStore(*config, wrote, [this, config, wrote](Status s) {
      reloading_ = false;
      if (stopping_) return;  // nothing more to apply or to announce
      if (!s.ok()) {
        log_->error("reload failed, the running configuration stays: {}", s.error().message);
        return EndReload("failed");
      }
      Apply(*config, *wrote);
      log_->info("reloaded: watching {} repos every {} s", scheduler_.size(),
                 scheduler_.options().interval_s);
      RearmTick();
      EndReload("applied");
    });
  }

  // result: "applied", "rejected" (the configuration is invalid) or "failed" (the store).
  void EndReload(const char* result) {
    metrics_
        .counter("hubwatch_config_reloads_total",
                 "configuration reloads (SIGHUP) by result: applied, rejected, failed",
                 {{"result", result}})
        .Add();
    (void)notify_.Ready();
    (void)notify_.StatusLine(StatusLine());
    if (reload_again_ && !stopping_) {
      reload_again_ = false;
      Reload();
    }
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
  const Clock& clock_ = *options_.clock;
  // What the service started with: the keys that need a restart keep these values.
  std::unique_ptr<const PreparedConfig> started_;
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
  SteadyTime last_tick_ = clock_.Now();
  int64_t last_cycle_ = 0;
  int64_t errors_ = 0;
  bool has_token_ = false;
  bool stopping_ = false;
  bool reloading_ = false;     // a reload's store write is in flight
  bool reload_again_ = false;  // a SIGHUP came meanwhile
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
