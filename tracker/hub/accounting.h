#pragma once

// What the client asked of the Hub: HTTP requests by kind and status, bytes on the wire, waits.
// CallStats covers one client call (all its pages, hops and retries); Accounting sums every call.
// Benchmarks and the daemon's status read these.

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace hubwatch::hub {

enum class RequestKind {
  kListModels,
  kModelInfo,
  kRefs,
  kCommits,
  kTree,
  kResolveHead,
  kResolveGet,
  kRangeRead,
};
inline constexpr size_t kRequestKindCount = 8;
std::string_view RequestKindName(RequestKind kind);

struct CallStats {
  int requests = 0;  // HTTP requests sent (every hop, page and retry)
  int retries = 0;
  int redirects = 0;
  int not_modified = 0;  // 304s answered from the ETag cache
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  std::chrono::milliseconds waited{0};  // backoff and rate-limit pauses
};

// Thread safety: written on the loop thread; copy a snapshot to read elsewhere.
class Accounting {
 public:
  // status 0: the transfer failed before a response.
  void Record(RequestKind kind, int status, uint64_t bytes_sent, uint64_t bytes_received);
  void RecordWait(std::chrono::milliseconds waited) { waited_ += waited; }

  // Calls fn(kind, status, requests) for every kind and status seen, in a stable order.
  void ForEach(const std::function<void(RequestKind, int, uint64_t)>& fn) const;
  // requests of `kind` that got `status`; status -1 means any.
  uint64_t Requests(RequestKind kind, int status = -1) const;
  uint64_t TotalRequests() const;
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }
  std::chrono::milliseconds waited() const { return waited_; }
  // "resolve_head 200=12 302=40; refs 200=1; ... sent=1234B received=5678B"
  std::string Summary() const;

 private:
  std::array<std::map<int, uint64_t>, kRequestKindCount> by_kind_status_;
  uint64_t bytes_sent_ = 0;
  uint64_t bytes_received_ = 0;
  std::chrono::milliseconds waited_{0};
};

}  // namespace hubwatch::hub
