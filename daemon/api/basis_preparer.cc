#include "daemon/api/basis_preparer.h"

#include "estimator/base/heap.h"

namespace hubwatch::api {

Result<std::unique_ptr<BasisPreparer>> BasisPreparer::Start(
    const ReadPool::OpenReader& open_reader, std::shared_ptr<page::BasisCache> cache) {
  Result<std::unique_ptr<ReadPool>> pool = ReadPool::Start(1, open_reader);
  if (!pool.ok()) return pool.error();
  return std::unique_ptr<BasisPreparer>(
      new BasisPreparer(std::move(pool).value(), std::move(cache)));
}

bool BasisPreparer::Prepare(const std::string& repo, const std::string& sha) {
  const std::string key = page::BasisKey(repo, sha);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queued_.count(key)) return true;
    if (queued_.size() >= kMaxWaiting) return false;
    queued_.insert(key);
  }
  pool_->Submit([this, repo, sha] { Run(repo, sha); });
  return true;
}

bool BasisPreparer::preparing(const std::string& repo, const std::string& sha) const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_.count(page::BasisKey(repo, sha)) != 0;
}

void BasisPreparer::Run(const std::string& repo, const std::string& sha) {
  const std::string key = page::BasisKey(repo, sha);
  {
    Result<page::RevisionBasis> basis = page::PrepareRevision(*ReadPool::ThreadReads(), repo, sha);
    if (basis.ok()) {
      auto value = std::make_shared<const page::RevisionBasis>(std::move(basis).value());
      const size_t bytes = value->ApproxBytes();
      if (cache_->Put(key, value) == value && !cache_->Find(key)) {
        page::RevisionBasis too_large;  // kept in its place: not prepared again per request
        too_large.shard_files = value->shard_files;
        too_large.unavailable = "this revision's estimate basis would take " +
                                std::to_string(bytes >> 20) +
                                " MiB, more than the server keeps for estimates";
        value.reset();
        cache_->Put(key, std::make_shared<const page::RevisionBasis>(std::move(too_large)));
      }
    }
    // A store error is not kept: the next request for it queues it again.
  }
  ReleaseFreedMemory();  // the headers' parse and the graph's construction leave it large
  std::lock_guard<std::mutex> lock(mu_);
  queued_.erase(key);
}

void BasisPreparer::Stop() {
  if (pool_) pool_->Stop();
}

}  // namespace hubwatch::api
