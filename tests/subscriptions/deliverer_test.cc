// WebhookDeliverer against a real HTTP receiver on 127.0.0.1 (tests/subscriptions/
// test_support.h), with a fake clock so days of backoff cost nothing and a seeded RNG so the
// jitter repeats. Signatures are checked by verify_webhook.py (Python's hmac and base64).

#include "daemon/subscriptions/deliverer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <fstream>
#include <set>

#include "daemon/subscriptions/curl_webhook_sender.h"
#include "daemon/subscriptions/matcher.h"
#include "daemon/subscriptions/signature.h"
#include "daemon/subscriptions/target_policy.h"
#include "tests/hub/fake_clock.h"
#include "tests/subscriptions/test_support.h"

namespace hubwatch::subscriptions {
namespace {

using store::OutboxRow;
using store::Store;
using store::Subscription;
using testing::AddAdvisory;
using testing::Receiver;
using testing::Sha;

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

std::string Hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

// Runs verify_webhook.py over the requests; true iff every signature verifies.
bool PythonVerifies(const std::vector<Receiver::Request>& requests, const std::string& secret,
                    const std::string& body_suffix = "") {
  nlohmann::json entries = nlohmann::json::array();
  for (const Receiver::Request& r : requests) {
    entries.push_back({{"secret", secret},
                       {"id", r.headers.at("webhook-id")},
                       {"timestamp", r.headers.at("webhook-timestamp")},
                       {"signature", r.headers.at("webhook-signature")},
                       {"body_hex", Hex(r.body + body_suffix)}});
  }
  // Per process and call: ctest runs the tests of this file in parallel processes.
  static int calls = 0;
  const std::string path = ::testing::TempDir() + "hubwatch_webhooks_" + std::to_string(getpid()) +
                           "_" + std::to_string(++calls) + ".json";
  std::ofstream(path) << entries.dump();
  const std::string command =
      std::string("python3 ") + HUBWATCH_VERIFY_WEBHOOK_PY + " " + path + " >/dev/null";
  const int rc = std::system(command.c_str());
  std::remove(path.c_str());
  return rc == 0;
}

class Deliverer : public ::testing::Test {
 protected:
  Deliverer() : store_(testing::OpenStore(db_.path())), access_(*store_) {}

  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
        .count();
  }
  int64_t AddSubscription(const std::string& url, const std::string& secret = kSecret) {
    Subscription s;
    s.url = url;
    s.secret = secret;
    s.created_at = Now();
    Result<int64_t> id = store_->outbox().AddSubscription(s);
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : 0;
  }
  std::string Advise(int n, const std::vector<int64_t>& subs) {
    std::vector<std::string> targets;
    for (int64_t id : subs) targets.push_back(SubscriptionTarget(id));
    return AddAdvisory(*store_, "google/gemma-2-9b-it", Sha(n), targets, Now());
  }
  DelivererOptions Options() {
    DelivererOptions o;
    o.allow_private_targets = true;
    o.user_agent = "hubwatch/test";
    o.metrics = &metrics_;
    o.log = [this](std::string_view line) { log_.emplace_back(line); };
    return o;
  }
  // Runs the loop until `done` holds (or 20 s of real time pass).
  void RunUntil(const std::function<bool()>& done) {
    io_.restart();  // a run that ran out of work leaves the loop stopped
    auto guard = boost::asio::make_work_guard(io_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io_.run_for(std::chrono::milliseconds(5));
    }
    std::string log;
    for (const std::string& line : log_) log += line + "\n";
    ASSERT_TRUE(done()) << "timed out; log:\n" << log;
  }
  // Runs a deliverer until its first attempt is recorded, and stops it there.
  AttemptReport FirstAttempt(WebhookSender& sender, const DelivererOptions& options) {
    WebhookDeliverer deliverer(access_, sender, clock_, random_, options);
    std::vector<AttemptReport> reports;
    deliverer.on_attempt = [&](const AttemptReport& r) {
      reports.push_back(r);
      deliverer.Stop();
    };
    deliverer.Start();
    RunUntil([&] { return !reports.empty() && deliverer.in_flight() == 0; });
    return reports.empty() ? AttemptReport{} : reports[0];
  }
  std::vector<OutboxRow> Rows(int64_t sub) { return *store_->outbox().ListDeliveries(sub); }
  bool AllSettled(int64_t sub) {
    for (const OutboxRow& r : Rows(sub)) {
      if (r.state == store::DeliveryState::kPending) return false;
    }
    return true;
  }

  testing::TempDb db_;
  boost::asio::io_context io_;
  hub::FakeClock clock_{io_};
  SeededRandom random_{7};
  service::Metrics metrics_;
  std::vector<std::string> log_;
  std::unique_ptr<Store> store_;
  service::InlineStoreAccess access_;
  Receiver receiver_;
};

TEST_F(Deliverer, PostsTheOsvRecordSignedPerStandardWebhooks) {
  const int64_t sub = AddSubscription(receiver_.url("/hook?team=ml"));
  const std::string a1 = Advise(1, {sub});
  const std::string a2 = Advise(2, {sub});
  CurlWebhookSender sender(io_);
  WebhookDeliverer deliverer(access_, sender, clock_, random_, Options());
  deliverer.Start();
  RunUntil([&] { return AllSettled(sub); });

  const std::vector<Receiver::Request> got = receiver_.requests();
  ASSERT_EQ(got.size(), 2u);
  std::set<std::string> ids;
  for (const Receiver::Request& r : got) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/hook?team=ml");
    EXPECT_EQ(r.headers.at("content-type"), "application/json");
    EXPECT_EQ(r.headers.at("user-agent"), "hubwatch/test");
    EXPECT_EQ(r.headers.count("expect"), 0u);
    EXPECT_EQ(r.headers.at("webhook-timestamp"), std::to_string(Now()));
    const std::string advisory = nlohmann::json::parse(r.body)["id"];
    // The body is the stored record, byte for byte.
    EXPECT_EQ(r.body, (*store_->advisories().GetAdvisory(advisory))->osv.dump());
    EXPECT_EQ(r.headers.at("webhook-id"), WebhookId(advisory, SubscriptionTarget(sub)));
    EXPECT_TRUE(Verify(kSecret, r.headers.at("webhook-id"), r.headers.at("webhook-timestamp"),
                       r.body, r.headers.at("webhook-signature"), Now())
                    .ok());
    ids.insert(advisory);
  }
  EXPECT_EQ(ids, (std::set<std::string>{a1, a2}));
  EXPECT_TRUE(PythonVerifies(got, kSecret));
  EXPECT_FALSE(PythonVerifies(got, kSecret, " "));  // the check can fail
  for (const OutboxRow& r : Rows(sub)) {
    EXPECT_EQ(r.state, store::DeliveryState::kDelivered);
    EXPECT_EQ(r.attempts, 1);
    EXPECT_EQ(r.last_status, 200);
  }
  EXPECT_EQ(
      metrics_.counter("hubwatch_webhook_attempts_total", "", {{"result", "delivered"}}).value(),
      2u);
  for (const std::string& line : log_) EXPECT_EQ(line.find("team=ml"), std::string::npos) << line;
}

TEST_F(Deliverer, RetriesWithFullJitterAndTheSameIdUntilDelivered) {
  receiver_.Script(
      {{500}, {503}, {429, {{"Retry-After", "120"}}}, {302, {{"Location", "/x"}}}, {200}});
  const int64_t sub = AddSubscription(receiver_.url());
  const std::string advisory = Advise(1, {sub});
  CurlWebhookSender sender(io_);
  WebhookDeliverer deliverer(access_, sender, clock_, random_, Options());
  std::vector<AttemptReport> reports;
  deliverer.on_attempt = [&](const AttemptReport& r) { reports.push_back(r); };
  deliverer.Start();
  RunUntil([&] { return AllSettled(sub); });

  const std::vector<Receiver::Request> got = receiver_.requests();
  ASSERT_EQ(got.size(), 5u);  // the 302 was not followed to /x
  for (const Receiver::Request& r : got) {
    EXPECT_EQ(r.target, "/hook");
    EXPECT_EQ(r.headers.at("webhook-id"), WebhookId(advisory, SubscriptionTarget(sub)));
  }
  EXPECT_TRUE(PythonVerifies(got, kSecret));
  ASSERT_EQ(reports.size(), 5u);
  const std::vector<std::string> errors = {"HTTP 500", "HTTP 503", "HTTP 429", "HTTP 302", ""};
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].attempt, static_cast<int64_t>(i + 1));
    EXPECT_EQ(reports[i].error, errors[i]);
  }
  // Full jitter: retry n waits in [1 s, 5 s * 2^n]; Retry-After: 120 is a floor.
  for (size_t i = 0; i + 1 < got.size(); ++i) {
    const int64_t gap = std::stoll(got[i + 1].headers.at("webhook-timestamp")) -
                        std::stoll(got[i].headers.at("webhook-timestamp"));
    EXPECT_GE(gap, i == 2 ? 120 : 1) << i;
    EXPECT_LE(gap, i == 2 ? 121 : 5 << i) << i;
  }
  const OutboxRow row = Rows(sub)[0];
  EXPECT_EQ(row.state, store::DeliveryState::kDelivered);
  EXPECT_EQ(row.attempts, 5);
}

TEST_F(Deliverer, GivesUpAfterTheRetryWindow) {
  receiver_.set_default({500});
  const int64_t sub = AddSubscription(receiver_.url());
  const int64_t created = Now();
  Advise(1, {sub});
  CurlWebhookSender sender(io_);
  WebhookDeliverer deliverer(access_, sender, clock_, random_, Options());  // 3 days
  deliverer.Start();
  RunUntil([&] { return AllSettled(sub); });

  const OutboxRow row = Rows(sub)[0];
  EXPECT_EQ(row.state, store::DeliveryState::kFailed);
  EXPECT_NE(row.last_error.find("HTTP 500"), std::string::npos);
  EXPECT_NE(row.last_error.find("gave up"), std::string::npos);
  const std::vector<Receiver::Request> got = receiver_.requests();
  EXPECT_EQ(static_cast<int64_t>(got.size()), row.attempts);
  // Capped at 6 h (mean 3 h) over 72 h: a couple of dozen attempts, the last within the window.
  EXPECT_GE(got.size(), 12u);
  EXPECT_LE(got.size(), 60u);
  const int64_t last = std::stoll(got.back().headers.at("webhook-timestamp"));
  EXPECT_LE(last - created, 3 * 24 * 3600);
  EXPECT_GE(last - created, 3 * 24 * 3600 - 6 * 3600);
  EXPECT_EQ(metrics_.counter("hubwatch_webhook_attempts_total", "", {{"result", "failed"}}).value(),
            1u);
}

TEST_F(Deliverer, TimeoutsAreFailuresAndRetried) {
  receiver_.Script({{200, {}, std::chrono::milliseconds(2000)}});
  const int64_t sub = AddSubscription(receiver_.url());
  Advise(1, {sub});
  CurlWebhookSender sender(io_);
  DelivererOptions options = Options();
  options.timeout = std::chrono::milliseconds(300);
  WebhookDeliverer deliverer(access_, sender, clock_, random_, options);
  std::vector<AttemptReport> reports;
  deliverer.on_attempt = [&](const AttemptReport& r) { reports.push_back(r); };
  deliverer.Start();
  RunUntil([&] { return AllSettled(sub); });
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].result, AttemptReport::Result::kRetry);
  EXPECT_FALSE(reports[0].status.has_value());
  EXPECT_NE(reports[0].error.find("timed out"), std::string::npos) << reports[0].error;
  EXPECT_EQ(reports[1].result, AttemptReport::Result::kDelivered);
}

TEST_F(Deliverer, GoneDisablesTheSubscriptionAndFailsItsPendingRows) {
  Receiver ok;
  receiver_.set_default({410});
  const int64_t gone = AddSubscription(receiver_.url());
  const int64_t fine = AddSubscription(ok.url());
  for (int n = 1; n <= 3; ++n) Advise(n, {gone, fine});
  SubscriptionMatcher matcher;
  ASSERT_TRUE(matcher.Refresh(*store_).ok());
  ASSERT_EQ(matcher.size(), 2u);
  CurlWebhookSender sender(io_);
  DelivererOptions options = Options();
  options.max_in_flight = 1;
  std::vector<int64_t> disabled;
  options.on_disabled = [&](int64_t id) {
    disabled.push_back(id);
    (void)matcher.Refresh(*store_);
  };
  WebhookDeliverer deliverer(access_, sender, clock_, random_, options);
  deliverer.Start();
  RunUntil([&] { return AllSettled(gone) && AllSettled(fine); });

  EXPECT_EQ(receiver_.requests().size(), 1u);
  EXPECT_EQ(ok.requests().size(), 3u);
  EXPECT_EQ(disabled, (std::vector<int64_t>{gone}));
  EXPECT_EQ(matcher.size(), 1u);
  const std::optional<Subscription> s = *store_->outbox().GetSubscription(gone);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->disabled_at.has_value());
  EXPECT_EQ(s->disabled_reason, "the receiver answered 410 Gone");
  for (const OutboxRow& r : Rows(gone)) EXPECT_EQ(r.state, store::DeliveryState::kFailed);
  EXPECT_EQ(Rows(gone)[0].last_status, 410);
  for (const OutboxRow& r : Rows(fine)) EXPECT_EQ(r.state, store::DeliveryState::kDelivered);
  // A later advisory for the disabled subscription is never sent.
  Advise(4, {gone});
  deliverer.Kick();
  RunUntil([&] { return deliverer.in_flight() == 0; });
  io_.run_for(std::chrono::milliseconds(50));
  EXPECT_EQ(receiver_.requests().size(), 1u);
}

TEST_F(Deliverer, ARestartInTheMiddleOfRetriesDeliversWithTheSameId) {
  receiver_.set_default({500});
  const int64_t sub = AddSubscription(receiver_.url());
  const std::string advisory = Advise(1, {sub});
  {
    CurlWebhookSender sender(io_);
    WebhookDeliverer deliverer(access_, sender, clock_, random_, Options());
    int attempts = 0;
    deliverer.on_attempt = [&](const AttemptReport&) {
      if (++attempts == 2) deliverer.Stop();
    };
    deliverer.Start();
    RunUntil([&] { return attempts == 2 && deliverer.in_flight() == 0; });
  }
  store_.reset();
  ASSERT_EQ(receiver_.requests().size(), 2u);

  // A new process: a fresh store connection, clock, RNG and sender; the receiver is back.
  receiver_.set_default({204});
  boost::asio::io_context io;
  hub::FakeClock clock(io);
  clock.SetWallTime(clock_.WallNow());
  SeededRandom random(99);
  std::unique_ptr<Store> reopened = testing::OpenStore(db_.path());
  service::InlineStoreAccess access(*reopened);
  CurlWebhookSender sender(io);
  WebhookDeliverer deliverer(access, sender, clock, random, Options());
  deliverer.Start();
  auto guard = boost::asio::make_work_guard(io);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (reopened->outbox().ListDeliveries(sub)->at(0).state == store::DeliveryState::kPending &&
         std::chrono::steady_clock::now() < deadline) {
    io.run_for(std::chrono::milliseconds(5));
  }
  const OutboxRow row = reopened->outbox().ListDeliveries(sub)->at(0);
  EXPECT_EQ(row.state, store::DeliveryState::kDelivered);
  EXPECT_EQ(row.attempts, 3);
  const std::vector<Receiver::Request> got = receiver_.requests();
  ASSERT_EQ(got.size(), 3u);
  for (const Receiver::Request& r : got) {
    EXPECT_EQ(r.headers.at("webhook-id"), WebhookId(advisory, SubscriptionTarget(sub)));
  }
  EXPECT_TRUE(PythonVerifies(got, kSecret));
}

TEST_F(Deliverer, RefusesAHostnameThatResolvesToLoopback) {
  // "rebind.test" resolves to 127.0.0.1 (CURLOPT_RESOLVE stands in for DNS): the URL passes the
  // create-time check, the connect-time check refuses it.
  const std::string host = "rebind.test:" + std::to_string(receiver_.port());
  const std::string url = "http://" + host + "/hook";
  ASSERT_TRUE(CheckTargetUrl(url, false).ok());
  const int64_t sub = AddSubscription(url);
  Advise(1, {sub});
  CurlWebhookSenderOptions sender_options;
  sender_options.resolve = {host + ":127.0.0.1"};
  CurlWebhookSender sender(io_, sender_options);
  DelivererOptions options = Options();
  options.allow_private_targets = false;
  const AttemptReport report = FirstAttempt(sender, options);
  EXPECT_EQ(receiver_.requests().size(), 0u);
  EXPECT_EQ(report.result, AttemptReport::Result::kRetry);
  EXPECT_EQ(report.error, "refused to connect to a loopback address (127.0.0.1)");
  EXPECT_EQ(Rows(sub)[0].state, store::DeliveryState::kPending);

  // The same name with private targets allowed is delivered: the refusal was the policy's.
  WebhookDeliverer allowed(access_, sender, clock_, random_, Options());
  allowed.Start();
  RunUntil([&] { return AllSettled(sub); });
  EXPECT_EQ(receiver_.requests().size(), 1u);
  EXPECT_EQ(Rows(sub)[0].state, store::DeliveryState::kDelivered);
}

TEST_F(Deliverer, RefusesAStoredLoopbackUrlOncePrivateTargetsAreOff) {
  const int64_t sub = AddSubscription(receiver_.url());
  Advise(1, {sub});
  CurlWebhookSender sender(io_);
  DelivererOptions options = Options();
  options.allow_private_targets = false;
  const AttemptReport report = FirstAttempt(sender, options);
  EXPECT_EQ(receiver_.requests().size(), 0u);
  EXPECT_NE(report.error.find("loopback"), std::string::npos) << report.error;
}

TEST_F(Deliverer, KickPicksUpRowsCommittedLater) {
  const int64_t sub = AddSubscription(receiver_.url());
  CurlWebhookSender sender(io_);
  WebhookDeliverer deliverer(access_, sender, clock_, random_, Options());
  deliverer.Start();
  io_.run_for(std::chrono::milliseconds(20));
  EXPECT_EQ(receiver_.requests().size(), 0u);
  Advise(1, {sub});
  deliverer.Kick();
  RunUntil([&] { return !Rows(sub).empty() && AllSettled(sub); });
  EXPECT_EQ(receiver_.requests().size(), 1u);
}

TEST_F(Deliverer, WithAStoreThreadEveryRowIsDeliveredExactlyOnce) {
  receiver_.Script({{500}, {500}, {500}});
  const int64_t sub = AddSubscription(receiver_.url());
  for (int n = 1; n <= 6; ++n) Advise(n, {sub});
  Result<std::unique_ptr<service::ThreadedStoreAccess>> threaded =
      service::ThreadedStoreAccess::Open(io_, db_.path());
  ASSERT_TRUE(threaded.ok());
  CurlWebhookSender sender(io_);
  DelivererOptions options = Options();
  options.max_in_flight = 3;
  WebhookDeliverer deliverer(**threaded, sender, clock_, random_, options);
  deliverer.Start();
  RunUntil([&] { return AllSettled(sub); });
  std::map<std::string, int> successes;
  std::set<std::string> done;
  const std::vector<Receiver::Request> got = receiver_.requests();
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string& id = got[i].headers.at("webhook-id");
    EXPECT_EQ(done.count(id), 0u) << "sent again after it was delivered: " << id;
    if (i >= 3) done.insert(id);  // the first three requests got 500
  }
  EXPECT_EQ(done.size(), 6u);
  EXPECT_EQ(got.size(), 9u);
  for (const OutboxRow& r : Rows(sub)) EXPECT_EQ(r.state, store::DeliveryState::kDelivered);
  (*threaded)->Shutdown();
}

}  // namespace
}  // namespace hubwatch::subscriptions
