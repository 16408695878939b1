#include "daemon/api/server_core.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <memory>

#include "daemon/api/sse_stream.h"
#include "estimator/base/heap.h"

namespace hubwatch::api {
namespace {

// A request body at least this large can leave megabytes of small freed blocks (its parsed
// JSON, its form fields) in the heap after its job; the job gives them back to the system.
constexpr size_t kReleaseAfterBodyBytes = 64 << 10;

}  // namespace

ServerCore::ServerCore(const config::ApiConfig& config, ApiDeps deps,
                       std::unique_ptr<ReadPool> pool, std::unique_ptr<BasisPreparer> preparer,
                       std::shared_ptr<page::BasisCache> bases)
    : io_(*deps.io),
      metrics_(*deps.metrics),
      pool_(std::move(pool)),
      preparer_(std::move(preparer)) {
  if (bases) ctx_.bases = std::move(bases);
  ctx_.preparer = preparer_.get();
  ctx_.config = config;
  ctx_.store = deps.store;
  ctx_.metrics = deps.metrics;
  ctx_.control = deps.control;
  ctx_.subscriptions = deps.subscriptions;
  ctx_.admin_token = std::move(deps.admin_token);
  ctx_.hub_webhook_secret = std::move(deps.hub_webhook_secret);
  ctx_.hub_url = std::move(deps.hub_url);
  ctx_.clock = deps.clock;
  ctx_.tuning = deps.tuning;
  ctx_.pages = std::make_shared<page::LruCache<EncodedBody>>(deps.tuning.page_cache_entries);
  ctx_.alive = alive_;
  router_ = BuildRouter(ctx_);
}

int ServerCore::max_streams() const { return std::max(1, ctx_.config.max_connections / 2); }

std::optional<Slot> ServerCore::SlotForNewConnection() const {
  const int general =
      counts_[static_cast<int>(Slot::kGeneral)] + counts_[static_cast<int>(Slot::kStream)];
  if (general < ctx_.config.max_connections) return Slot::kGeneral;
  if (counts_[static_cast<int>(Slot::kProbe)] < kProbeSlots) return Slot::kProbe;
  return std::nullopt;
}

bool ServerCore::PreemptProbe() {
  for (Connection* c : probes_) {
    const auto it = entries_.find(c);
    if (it == entries_.end() || !it->second.preemptible) continue;
    std::shared_ptr<Connection> held = it->second.weak.lock();
    Unregister(c);  // the slot is free now; the connection goes when its handlers run
    if (held) held->Close();
    return true;
  }
  return false;
}

void ServerCore::Register(Connection* c, std::weak_ptr<Connection> weak, Slot slot) {
  entries_[c] = {std::move(weak), slot};
  ++counts_[static_cast<int>(slot)];
  if (slot == Slot::kProbe) probes_.push_back(c);
  if (stopped()) return;  // sessions may outlive Stop() and the metrics registry
  metrics_.Connections(open_connections());
  if (slot == Slot::kStream) metrics_.Streams(+1);
}

void ServerCore::Unregister(Connection* c) {
  const auto it = entries_.find(c);
  if (it == entries_.end()) return;
  const Slot slot = it->second.slot;
  --counts_[static_cast<int>(slot)];
  entries_.erase(it);
  if (slot == Slot::kProbe) std::erase(probes_, c);
  if (stopped()) return;
  metrics_.Connections(open_connections());
  if (slot == Slot::kStream) metrics_.Streams(-1);
}

void ServerCore::SetPreemptible(Connection* c, bool preemptible) {
  const auto it = entries_.find(c);
  if (it != entries_.end() && it->second.slot == Slot::kProbe) it->second.preemptible = preemptible;
}

void ServerCore::AddStream(std::weak_ptr<SseStream> stream) {
  streams_.push_back(std::move(stream));
}

void ServerCore::Dispatch(HttpRequest request, Respond respond, std::string* route_label) {
  const Router::Match match = router_.Find(request.method, request.path);
  if (!pool_ || !match.route || !match.route->heavy) {
    router_.Dispatch(request, std::move(respond), route_label);
    return;
  }
  *route_label = match.route->pattern;
  // The reply is sent on the network thread (the session's Send drops it once stopped), and the
  // session `respond` holds is released there too: the pool's copies of the callback may be the
  // last ones, and a session must never be destroyed on a worker (it unregisters from the core).
  std::shared_ptr<Respond> held(new Respond(std::move(respond)), [&io = io_](Respond* r) {
    boost::asio::post(io, [owned = std::unique_ptr<Respond>(r)] {});
  });
  Respond on_network = [&io = io_, held](HttpReply reply) {
    boost::asio::post(io,
                      [held, reply = std::move(reply)]() mutable { (*held)(std::move(reply)); });
  };
  pool_->Submit([this, request = std::move(request), on_network = std::move(on_network)]() mutable {
    router_.Dispatch(request, on_network, nullptr);
    if (request.body.size() >= kReleaseAfterBodyBytes) {
      request = HttpRequest();
      ReleaseFreedMemory();
    }
  });
}

void ServerCore::Stop() {
  if (stopped()) return;
  *alive_ = false;
  if (pool_) pool_->Stop();
  if (preparer_) preparer_->Stop();
  // Closing cancels every pending operation; the connections go when their handlers run.
  std::vector<std::shared_ptr<Connection>> live;
  for (auto& [raw, entry] : entries_) {
    if (auto c = entry.weak.lock()) live.push_back(std::move(c));
  }
  for (auto& c : live) c->Close();
  streams_.clear();
  metrics_.Connections(0);
  metrics_.StreamsClosed();
}

void ServerCore::OnNewAdvisories() {
  std::vector<std::weak_ptr<SseStream>> kept;
  for (auto& weak : streams_) {
    if (auto s = weak.lock(); s && s->is_open()) {
      s->Pump();
      kept.push_back(std::move(weak));
    }
  }
  streams_ = std::move(kept);
}

}  // namespace hubwatch::api
