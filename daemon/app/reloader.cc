#include "daemon/app/reloader.h"

#include <spdlog/spdlog.h>

namespace hubwatch::app {

Reloader::Reloader(std::function<Result<config::DaemonConfig>()> read,
                   const PreparedConfig& running, ReloadTarget& target,
                   const service::Notifier& notify, service::Metrics& metrics,
                   std::shared_ptr<spdlog::logger> log)
    : read_(std::move(read)),
      running_(running),
      target_(target),
      notify_(notify),
      metrics_(metrics),
      log_(std::move(log)) {}

void Reloader::Reload() {
  if (reloading_) {
    reload_again_ = true;
    return;
  }
  (void)notify_.Reloading();
  log_->info("SIGHUP: reloading {}", running_.config.path);
  Result<config::DaemonConfig> read = read_();
  Result<PreparedConfig> next =
      read.ok() ? PrepareConfig(std::move(read).value()) : Result<PreparedConfig>(read.error());
  if (!next.ok()) {
    log_->error("reload rejected, the running configuration stays: {}", next.error().message);
    return End("rejected");
  }
  if (std::vector<std::string> keys = KeysNeedingRestart(running_, *next); !keys.empty()) {
    std::string list;
    for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
    log_->warn("reload: {} changed; the new value(s) take effect at the next restart", list);
  }
  reloading_ = true;
  auto config = std::make_shared<const PreparedConfig>(std::move(next).value());
  auto wrote = std::make_shared<ConfigWrite>();
  target_.WriteToStore(*config, wrote, [this, config, wrote](Status s) {
    reloading_ = false;
    if (target_.stopping()) return;  // nothing more to apply or to announce
    if (!s.ok()) {
      log_->error("reload failed, the running configuration stays: {}", s.error().message);
      return End("failed");
    }
    target_.Apply(*config, *wrote);
    log_->info("reloaded: watching {} repos every {} s", wrote->repos.size(),
               config->config.poll.interval_s);
    End("applied");
  });
}

void Reloader::End(const char* result) {
  metrics_
      .counter("hubwatch_config_reloads_total",
               "configuration reloads (SIGHUP) by result: applied, rejected, failed",
               {{"result", result}})
      .Add();
  (void)notify_.Ready();
  (void)notify_.StatusLine(target_.status_line());
  if (reload_again_ && !target_.stopping()) {
    reload_again_ = false;
    Reload();
  }
}

}  // namespace hubwatch::app
