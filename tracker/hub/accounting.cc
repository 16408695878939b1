#include "tracker/hub/accounting.h"

namespace hubwatch::hub {

std::string_view RequestKindName(RequestKind kind) {
  switch (kind) {
    case RequestKind::kListModels:
      return "list_models";
    case RequestKind::kModelInfo:
      return "model_info";
    case RequestKind::kRefs:
      return "refs";
    case RequestKind::kCommits:
      return "commits";
    case RequestKind::kTree:
      return "tree";
    case RequestKind::kResolveHead:
      return "resolve_head";
    case RequestKind::kResolveGet:
      return "resolve_get";
    case RequestKind::kRangeRead:
      return "range_read";
  }
  return "unknown";
}

void Accounting::Record(RequestKind kind, int status, uint64_t sent, uint64_t received) {
  ++by_kind_status_[static_cast<size_t>(kind)][status];
  bytes_sent_ += sent;
  bytes_received_ += received;
}

uint64_t Accounting::Requests(RequestKind kind, int status) const {
  const auto& counts = by_kind_status_[static_cast<size_t>(kind)];
  if (status >= 0) {
    auto it = counts.find(status);
    return it == counts.end() ? 0 : it->second;
  }
  uint64_t total = 0;
  for (const auto& [s, n] : counts) total += n;
  return total;
}

uint64_t Accounting::TotalRequests() const {
  uint64_t total = 0;
  for (size_t k = 0; k < kRequestKindCount; ++k) total += Requests(static_cast<RequestKind>(k));
  return total;
}

void Accounting::ForEach(const std::function<void(RequestKind, int, uint64_t)>& fn) const {
  for (size_t k = 0; k < kRequestKindCount; ++k) {
    for (const auto& [status, n] : by_kind_status_[k]) fn(static_cast<RequestKind>(k), status, n);
  }
}

std::string Accounting::Summary() const {
  std::string out;
  for (size_t k = 0; k < kRequestKindCount; ++k) {
    if (by_kind_status_[k].empty()) continue;
    out += std::string(RequestKindName(static_cast<RequestKind>(k)));
    for (const auto& [status, n] : by_kind_status_[k]) {
      out += " " + std::to_string(status) + "=" + std::to_string(n);
    }
    out += "; ";
  }
  out += "sent=" + std::to_string(bytes_sent_) + "B received=" + std::to_string(bytes_received_) +
         "B waited=" + std::to_string(waited_.count()) + "ms";
  return out;
}

}  // namespace hubwatch::hub
