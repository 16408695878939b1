#include "daemon/api/sse_stream.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <vector>

#include "daemon/api/sse.h"
#include "daemon/service/store_access.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

constexpr int64_t kStreamBatch = 100;  // advisories and follow events per write, each

}  // namespace

SseStream::SseStream(beast::tcp_stream stream, EventStreamStart start, std::string head,
                     std::shared_ptr<ServerCore> core)
    : stream_(std::move(stream)),
      start_(std::move(start)),
      head_(std::move(head)),
      core_(std::move(core)),
      heartbeat_(stream_.get_executor()) {}

SseStream::~SseStream() { core_->Unregister(this); }

void SseStream::Start() {
  core_->Register(this, weak_from_this(), Slot::kStream);
  core_->AddStream(weak_from_this());
  WatchForClose();
  ScheduleHeartbeat();
  Write(std::move(head_));
  pump_again_ = true;  // replay what came after Last-Event-ID once the head is out
}

void SseStream::Close() {
  beast::error_code ignored;
  heartbeat_.cancel();
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
}

void SseStream::Pump() {
  if (core_->stopped()) return;
  if (writing_) {
    pump_again_ = true;
    return;
  }
  const bool follow_kind = start_.kind == "tracked" || start_.kind == "untracked";
  std::string out;
  size_t events = 0;
  if (!follow_kind) {
    store::Query q{.repo = start_.repo,
                   .kind = start_.kind,
                   .after_seq = start_.after_seq,
                   .limit = kStreamBatch};
    Result<std::vector<store::AdvisoryRecord>> batch =
        core_->ctx().reads().advisories().ListAdvisories(q);
    if (!batch.ok()) return Close();
    for (const store::AdvisoryRecord& a : *batch) out += SseEvent(a, start_.after_follow_seq);
    if (!batch->empty()) start_.after_seq = batch->back().seq;
    events += batch->size();
    pump_again_ = static_cast<int64_t>(batch->size()) == kStreamBatch;
  }
  if (start_.kind.empty() || follow_kind) {
    Result<std::vector<store::FollowEvent>> batch =
        core_->ctx().reads().follows().EventsAfter(start_.after_follow_seq, kStreamBatch);
    if (!batch.ok()) return Close();
    for (const store::FollowEvent& e : *batch) {
      start_.after_follow_seq = e.seq;
      if (!start_.repo.empty() && e.repo != start_.repo) continue;
      if (follow_kind && e.kind != start_.kind) continue;
      out += SseFollowEvent(e, start_.after_seq);
      ++events;
    }
    pump_again_ |= static_cast<int64_t>(batch->size()) == kStreamBatch;
  }
  if (out.empty()) {
    // Only filtered-out events: nothing to write, but maybe more to read.
    if (pump_again_) {
      pump_again_ = false;
      boost::asio::post(stream_.get_executor(), [self = shared_from_this()] { self->Pump(); });
    }
    return;
  }
  core_->metrics().StreamEvents(events);
  Write(std::move(out));
}

void SseStream::Write(std::string data) {
  writing_ = true;
  auto out = std::make_shared<std::string>(std::move(data));
  // A client that stops reading is dropped.
  stream_.expires_after(
      std::chrono::seconds(std::max<int64_t>(1, core_->ctx().config.read_timeout_s)));
  asio::async_write(stream_, asio::buffer(*out),
                    [self = shared_from_this(), out](beast::error_code ec, size_t) {
                      self->writing_ = false;
                      if (ec || self->core_->stopped()) return self->Close();
                      if (self->pump_again_) {
                        self->pump_again_ = false;
                        self->Pump();
                      }
                    });
}

void SseStream::WatchForClose() {
  stream_.socket().async_read_some(asio::buffer(sink_),
                                   [self = shared_from_this()](beast::error_code ec, size_t) {
                                     if (ec) return self->Close();
                                     self->WatchForClose();
                                   });
}

void SseStream::ScheduleHeartbeat() {
  heartbeat_.expires_after(core_->ctx().tuning.sse_heartbeat);
  heartbeat_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->core_->stopped() || !self->is_open()) return;
    if (!self->writing_) self->Write(SseHeartbeat());
    self->ScheduleHeartbeat();
  });
}

}  // namespace hubwatch::api
