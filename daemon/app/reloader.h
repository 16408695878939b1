#pragma once

// Reloader: SIGHUP. Reads the configuration again and checks it as a start does
// (PrepareConfig); the target writes its store changes in one transaction and then applies the
// rest in memory. On any failure nothing changes and the running configuration stays. A SIGHUP
// during a reload runs another once this one ends. Each reload sends RELOADING=1, then READY=1
// and the status line, and counts in hubwatch_config_reloads_total by result.
//
// Thread safety: network thread only. REQUIRES: everything it borrows outlives it.

#include <functional>
#include <memory>
#include <string>

#include "daemon/app/prepared_config.h"
#include "daemon/config/config.h"
#include "daemon/service/metrics.h"
#include "daemon/service/notify.h"
#include "estimator/base/result.h"

namespace spdlog {
class logger;
}

namespace hubwatch::app {

// What a reload changes: implemented by the service.
class ReloadTarget {
 public:
  virtual ~ReloadTarget() = default;
  // Writes what `config` changes in the store; `done` runs on the network thread with the
  // status, `wrote` filled when it is ok.
  virtual void WriteToStore(const PreparedConfig& config, std::shared_ptr<ConfigWrite> wrote,
                            std::function<void(Status)> done) = 0;
  // What follows the store write, in memory: cannot fail.
  virtual void Apply(const PreparedConfig& config, const ConfigWrite& wrote) = 0;
  virtual bool stopping() const = 0;
  virtual std::string status_line() const = 0;
};

class Reloader {
 public:
  // `read` reads the configuration file again; `running` is what the service started with (the
  // keys that need a restart keep its values).
  Reloader(std::function<Result<config::DaemonConfig>()> read, const PreparedConfig& running,
           ReloadTarget& target, const service::Notifier& notify, service::Metrics& metrics,
           std::shared_ptr<spdlog::logger> log);

  void Reload();

 private:
  // result: "applied", "rejected" (the configuration is invalid) or "failed" (the store).
  void End(const char* result);

  std::function<Result<config::DaemonConfig>()> read_;
  const PreparedConfig& running_;
  ReloadTarget& target_;
  const service::Notifier& notify_;
  service::Metrics& metrics_;
  std::shared_ptr<spdlog::logger> log_;
  bool reloading_ = false;     // a reload's store write is in flight
  bool reload_again_ = false;  // a SIGHUP came meanwhile
};

}  // namespace hubwatch::app
