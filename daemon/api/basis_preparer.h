#pragma once

// BasisPreparer: prepares the estimate bases too costly for a request (a revision whose stored
// safetensors headers are larger than a request may read: LookUpBasis), one at a time, on a
// thread and a read connection of its own, so that no request waits on one and no page is
// delayed by one. Each basis is prepared once while it is wanted: a revision asked for while
// it waits or is prepared is not queued again, and at most kMaxWaiting wait (a request beyond
// that is told to retry). What it prepares goes into the cache the requests read; a basis that
// weighs more than the whole cache is kept as the reason it is not shown, so that it is not
// prepared again for every request.
//
// Thread safety: Prepare() and preparing() from any thread. Stop() (the destructor) from a
// thread that is not its worker. Ownership: owns its pool; shares the cache.

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "daemon/api/read_pool.h"
#include "daemon/page/basis_cache.h"
#include "estimator/base/result.h"

namespace hubwatch::api {

class BasisPreparer {
 public:
  static constexpr size_t kMaxWaiting = 8;

  static Result<std::unique_ptr<BasisPreparer>> Start(const ReadPool::OpenReader& open_reader,
                                                      std::shared_ptr<page::BasisCache> cache);
  ~BasisPreparer() { Stop(); }

  // Queues the basis of repo@sha; true when it is queued or already waiting or in preparation,
  // false when kMaxWaiting others wait.
  bool Prepare(const std::string& repo, const std::string& sha);
  bool preparing(const std::string& repo, const std::string& sha) const;
  void Stop();

 private:
  BasisPreparer(std::unique_ptr<ReadPool> pool, std::shared_ptr<page::BasisCache> cache)
      : pool_(std::move(pool)), cache_(std::move(cache)) {}
  void Run(const std::string& repo, const std::string& sha);

  std::unique_ptr<ReadPool> pool_;
  std::shared_ptr<page::BasisCache> cache_;
  mutable std::mutex mu_;
  std::set<std::string> queued_;  // keys waiting or in preparation; guarded by mu_
};

}  // namespace hubwatch::api
