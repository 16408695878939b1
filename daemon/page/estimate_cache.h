#pragma once

// EstimateCache: the estimates model pages show, by repo@sha, the most recently used kept. A
// revision's estimate is a pure function of its stored files and of the code, so an entry never
// goes stale; recomputing it (the estimator plus every shard's safetensors header from the
// store) is most of what a page costs, so repeated page loads skip it.
//
// Thread safety: all members may be called from any thread (the API's read pool).

#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/page/page_data.h"

namespace hubwatch::page {

class EstimateCache {
 public:
  explicit EstimateCache(size_t capacity) : capacity_(capacity) {}

  using Compute = std::function<Result<RevisionEstimate>()>;
  // The cached estimate of repo@sha, or compute()'s, kept when it succeeded. Two threads that
  // miss together may both compute; the first to finish is kept.
  Result<std::shared_ptr<const RevisionEstimate>> Get(const std::string& repo,
                                                      const std::string& sha,
                                                      const Compute& compute);
  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const RevisionEstimate>>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> recent_;  // most recently used first
  std::map<std::string, std::list<Entry>::iterator, std::less<>> index_;
};

}  // namespace hubwatch::page
