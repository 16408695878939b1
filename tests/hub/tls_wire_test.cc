// The real wire, end to end: hubwatch's poller -> libcurl -> nghttpx (TLS, ALPN h2,http/1.1,
// certificates of a test CA made with openssl) -> fakehub, for the Hub and, separately, its CDN.
// What the Hub's production wire does that cleartext HTTP/1.1 never showed: h2 on every
// request, multiplexing, certificate and host-name checks, a front restarting under load.
// Skipped when nghttpx is not installed (.ci/setup installs nghttp2-proxy).

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakehub/fakehub.h"
#include "tests/fakehub/synthetic.h"
#include "tests/hub/hub_test_env.h"
#include "tests/hub/tls_front.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/store.h"

namespace hubwatch::tls_test {
namespace {

constexpr char kToken[] = "hf_tls_wire_test_token";
constexpr char kNotVerified[] = "certificate could not be verified";

std::string RepoId(int i) {
  char id[64];
  std::snprintf(id, sizeof id, "synthetic/model-%05d", i);
  return id;
}

struct Certs {
  std::string hub_cert, hub_key, cdn_cert, cdn_key;
};

class TlsWireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (NghttpxPath().empty()) {
      GTEST_SKIP() << "nghttpx not installed (Debian: nghttp2-proxy; .ci/setup installs it)";
    }
    Result<TestPki> pki = SharedTestPki();
    ASSERT_TRUE(pki.ok()) << pki.error().message;
    pki_ = *pki;
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // a parameterized test's "Name/Param"
    work_ = ::testing::TempDir() + "tls_wire_" + name;
    std::filesystem::remove_all(work_);
    std::filesystem::create_directories(work_);
  }

  void TearDown() override {
    pollers_.clear();
    stack_.reset();
    store_.reset();
    hub_front_.reset();
    cdn_front_.reset();
    if (fakehub_) fakehub_->Stop();
    if (!HasFailure() && !work_.empty()) std::filesystem::remove_all(work_);  // kept on failure
  }

  Certs Good() const {
    return {pki_.loopback_cert, pki_.loopback_key, pki_.loopback_cert, pki_.loopback_key};
  }

  // fakehub with `repos` synthetic repos (one commit: config, tokenizer config and a
  // safetensors file on the CDN), a front before each listener, a store, a client.
  void StartWire(int repos, Certs certs, bool trust_test_ca = true,
                 std::string public_cdn_url = "") {
    const uint16_t hub_port = FreePort("127.0.0.1");
    const uint16_t cdn_port = FreePort("127.0.0.2");
    fakehub::FakeHubOptions options;
    options.extra_repos =
        fakehub::GenerateSyntheticRepos({.repos = repos, .commits = 1, .tensors_per_file = 2});
    options.users = {{kToken, "tls-tests", true}};
    options.api_quota = options.resolvers_quota = 1'000'000;
    options.public_hub_url = "https://127.0.0.1:" + std::to_string(hub_port);
    options.public_cdn_url =
        public_cdn_url.empty() ? "https://127.0.0.2:" + std::to_string(cdn_port) : public_cdn_url;
    if (!public_cdn_url.empty()) options.cdn_port = cdn_port;  // the cleartext CDN is "public"
    auto hub = fakehub::FakeHub::Start(std::move(options));
    ASSERT_TRUE(hub.ok()) << hub.error().message;
    fakehub_ = std::move(hub).value();
    hub_front_ =
        StartFront("127.0.0.1", hub_port, fakehub_->endpoint(), certs.hub_cert, certs.hub_key);
    if (public_cdn_url.empty()) {
      cdn_front_ = StartFront("127.0.0.2", cdn_port, fakehub_->cdn_endpoint(), certs.cdn_cert,
                              certs.cdn_key);
    }
    ASSERT_TRUE(hub_front_ && (cdn_front_ || !public_cdn_url.empty()));
    auto store = store::Store::Open(work_ + "/hubwatch.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    for (int i = 0; i < repos; ++i) {
      ASSERT_TRUE(store_->repos().AddRepo({.id = RepoId(i), .refs = {"main"}}).ok());
    }
    hub::HubClientOptions client;
    client.settings.endpoint = hub_front_->url();
    client.settings.token = hub::Secret(kToken);
    if (trust_test_ca) client.settings.ca_file = pki_.ca;
    // Retries on, with millisecond waits: a test never sleeps through a backoff.
    client.retry.max_retries = 3;
    client.retry.base = std::chrono::milliseconds(5);
    client.retry.cap = std::chrono::milliseconds(20);
    if (std::getenv("HUBWATCH_TEST_LOG")) {
      client.log = [](std::string_view line) {
        std::fprintf(stderr, "hub: %.*s\n", static_cast<int>(line.size()), line.data());
      };
    }
    stack_ = std::make_unique<hub::HubStack>(io_, std::move(client));
  }

  std::unique_ptr<TlsFront> StartFront(const std::string& host, uint16_t port,
                                       const std::string& backend, const std::string& cert,
                                       const std::string& key) {
    const std::string backend_port = backend.substr(backend.rfind(':') + 1);
    auto front = TlsFront::Start({.host = host,
                                  .port = port,
                                  .backend_host = host,
                                  .backend_port = static_cast<uint16_t>(std::stoi(backend_port)),
                                  .cert = cert,
                                  .key = key,
                                  .alpn = alpn_,
                                  .ticket_key = pki_.ticket_key},
                                 work_);
    EXPECT_TRUE(front.ok()) << front.error().message;
    return front.ok() ? std::move(front).value() : nullptr;
  }

  // Starts a poll of each of `ids` at once; `between` runs on the loop's turns until it returns
  // true (once). Returns the reports by repo.
  std::map<std::string, pipeline::PollReport> PollAll(const std::vector<std::string>& ids,
                                                      std::function<bool()> between = nullptr) {
    std::map<std::string, pipeline::PollReport> reports;
    auto poller =
        std::make_unique<pipeline::Poller>(stack_->client(), *store_, pipeline::PollerOptions{});
    for (const std::string& id : ids) {
      poller->Poll(id, [&reports, id](pipeline::PollReport r) { reports[id] = std::move(r); });
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (reports.size() < ids.size() && std::chrono::steady_clock::now() < deadline) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(50));
      if (between && between()) between = nullptr;
    }
    EXPECT_EQ(reports.size(), ids.size()) << "polls did not finish in 30 s";
    pollers_.push_back(std::move(poller));
    return reports;
  }

  pipeline::PollReport PollOne(const std::string& id) { return PollAll({id})[id]; }

  size_t Revisions(const std::string& id) {
    auto r = store_->revisions().ListRevisions(id);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->size() : 0;
  }

  store::RepoRecord Record(const std::string& id) {
    auto r = store_->repos().GetRepo(id);
    EXPECT_TRUE(r.ok() && r->has_value());
    return r.ok() && r->has_value() ? **r : store::RepoRecord{};
  }

  size_t FakehubRequests(const std::string& server, const std::string& needle = "") {
    size_t n = 0;
    for (const auto& r : fakehub_->RequestLog()) {
      if (r.server == server && r.path.find(needle) != std::string::npos) ++n;
    }
    return n;
  }

  // The front's access log once it lists every request fakehub answered behind it (nghttpx
  // writes a line after the response went out, so it may trail the client by a moment).
  // `unlogged`: requests fakehub saw that the front never finished (it was killed).
  std::vector<AccessLogEntry> Log(const TlsFront& front, const std::string& server,
                                  size_t unlogged = 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    std::vector<AccessLogEntry> log = front.AccessLog();
    while (log.size() + unlogged < FakehubRequests(server) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      log = front.AccessLog();
    }
    return log;
  }

  TestPki pki_;
  std::string alpn_ = "h2,http/1.1";  // what the fronts offer
  std::string work_;
  boost::asio::io_context io_;
  std::unique_ptr<fakehub::FakeHub> fakehub_;
  std::unique_ptr<TlsFront> hub_front_;
  std::unique_ptr<TlsFront> cdn_front_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<hub::HubStack> stack_;
  std::vector<std::unique_ptr<pipeline::Poller>> pollers_;
};

TEST_F(TlsWireTest, PollOverH2ThroughBothFrontsTokenStaysOnTheHub) {
  StartWire(1, Good());
  const pipeline::PollReport r = PollOne(RepoId(0));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.revisions, 1);
  EXPECT_EQ(Revisions(RepoId(0)), 1u);

  const std::vector<AccessLogEntry> hub = Log(*hub_front_, "hub");
  const std::vector<AccessLogEntry> cdn = Log(*cdn_front_, "cdn");
  ASSERT_FALSE(hub.empty());
  ASSERT_FALSE(cdn.empty()) << "the safetensors header is read from the CDN";
  for (const auto* log : {&hub, &cdn}) {
    for (const AccessLogEntry& e : *log) {
      EXPECT_EQ(e.protocol, "HTTP/2") << e.method << " " << e.path;
    }
  }
  EXPECT_EQ(hub.size(), FakehubRequests("hub"));
  // The token went to the Hub, never to the CDN it redirects to (another host).
  for (const auto& req : fakehub_->RequestLog()) {
    EXPECT_EQ(req.authorization, req.server == "hub") << req.server << " " << req.path;
  }
}

TEST_F(TlsWireTest, ThirtyTwoConcurrentPollsShareAtMostTwoConnections) {
  constexpr int kRepos = 32;
  StartWire(kRepos, Good());
  std::vector<std::string> ids;
  for (int i = 0; i < kRepos; ++i) ids.push_back(RepoId(i));
  for (const auto& [id, report] : PollAll(ids)) {
    EXPECT_TRUE(report.ok) << id << ": " << report.error;
    EXPECT_EQ(Revisions(id), 1u) << id;
  }
  EXPECT_GE(Log(*hub_front_, "hub").size(), 3u * kRepos);
  Log(*cdn_front_, "cdn");
  EXPECT_LE(hub_front_->Connections(), 2u);
  EXPECT_LE(cdn_front_->Connections(), 2u);
}

// What the front presents, and whether the client trusts the test CA.
struct BadCertCase {
  const char* name;
  bool trust_test_ca;
  bool other_name;  // a certificate for other.invalid
  bool expired;
};

void PrintTo(const BadCertCase& c, std::ostream* os) { *os << c.name; }

class TlsCertificateTest : public TlsWireTest, public ::testing::WithParamInterface<BadCertCase> {};

TEST_P(TlsCertificateTest, FailsSaysWhyStoresNothingSendsNothing) {
  const BadCertCase c = GetParam();
  Certs certs = Good();
  if (c.other_name) certs.hub_cert = pki_.other_cert, certs.hub_key = pki_.other_key;
  if (c.expired) certs.hub_cert = pki_.expired_cert, certs.hub_key = pki_.expired_key;
  StartWire(1, certs, c.trust_test_ca);
  const pipeline::PollReport r = PollOne(RepoId(0));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(kNotVerified), std::string::npos) << r.error;
  EXPECT_EQ(r.stats.retries, 0) << "a certificate that failed fails again: no retry";
  EXPECT_EQ(Revisions(RepoId(0)), 0u);
  const store::RepoRecord record = Record(RepoId(0));
  EXPECT_EQ(record.state, store::RepoState::kErroring);
  EXPECT_NE(record.state_detail.find(kNotVerified), std::string::npos) << record.state_detail;
  EXPECT_EQ(FakehubRequests("hub"), 0u) << "no request may pass an unverified handshake";
  EXPECT_TRUE(hub_front_->AccessLog().empty());
}

INSTANTIATE_TEST_SUITE_P(Certificates, TlsCertificateTest,
                         ::testing::Values(BadCertCase{"UnknownCa", false, false, false},
                                           BadCertCase{"AnotherName", true, true, false},
                                           BadCertCase{"Expired", true, false, true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(TlsWireTest, HubFrontRestartingMidCycleInFlightPollsRetryAndComplete) {
  constexpr int kRepos = 8;
  StartWire(kRepos, Good());
  // Every tree read is held at fakehub, so all of them are in flight when the front dies.
  fakehub::FaultRule hold;
  hold.path_regex = "/tree/";
  hold.action = fakehub::FaultAction::kDelay;
  hold.delay = std::chrono::seconds(5);
  hold.times = kRepos;
  fakehub_->AddFault(hold);
  std::vector<std::string> ids;
  for (int i = 0; i < kRepos; ++i) ids.push_back(RepoId(i));
  bool restarted = false;
  const auto reports = PollAll(ids, [&] {
    if (FakehubRequests("hub", "/tree/") < kRepos) return false;
    const Status s = hub_front_->Restart();  // the old connection dies with the old process
    EXPECT_TRUE(s.ok()) << s.error().message;
    restarted = true;
    return true;
  });
  ASSERT_TRUE(restarted);
  int retries = 0;
  for (const auto& [id, report] : reports) {
    EXPECT_TRUE(report.ok) << id << ": " << report.error;
    EXPECT_EQ(Revisions(id), 1u) << id;
    retries += report.stats.retries;
  }
  EXPECT_GE(retries, kRepos);
  EXPECT_EQ(FakehubRequests("hub", "/tree/"), 2u * kRepos) << "each held read sent again once";
  for (const AccessLogEntry& e : Log(*hub_front_, "hub", kRepos)) EXPECT_EQ(e.protocol, "HTTP/2");
}

// A reconnect resumes the TLS session the transport's share holds (the restarted front has the
// same ticket key). Over HTTP/1.1: libcurl 7.88 (Debian 12) stores no session from an h2
// connection (a bare libcurl program shows the same; nghttpx resumes h2 sessions for openssl
// s_client), so over h2 a reconnect is a full handshake there.
TEST_F(TlsWireTest, ReconnectResumesTheTlsSession) {
  alpn_ = "http/1.1";
  StartWire(1, Good());
  ASSERT_TRUE(PollOne(RepoId(0)).ok);
  const size_t before = Log(*hub_front_, "hub").size();
  ASSERT_TRUE(hub_front_->Restart().ok());  // the cached connections die
  const pipeline::PollReport again = PollOne(RepoId(0));
  ASSERT_TRUE(again.ok) << again.error;
  const std::vector<AccessLogEntry> log = Log(*hub_front_, "hub");
  ASSERT_GT(log.size(), before);
  EXPECT_FALSE(log.front().session_reused) << "the first connection is a full handshake";
  for (size_t i = before; i < log.size(); ++i) {
    EXPECT_TRUE(log[i].session_reused) << log[i].path;
    EXPECT_EQ(log[i].protocol, "HTTP/1.1");
  }
}

TEST_F(TlsWireTest, CdnFrontDownRevisionRetriedLaterNotStoredHalf) {
  StartWire(1, Good());
  cdn_front_->Stop();
  const pipeline::PollReport down = PollOne(RepoId(0));
  EXPECT_FALSE(down.ok);
  EXPECT_EQ(Revisions(RepoId(0)), 0u) << "a revision is stored whole or not at all";
  EXPECT_EQ(Record(RepoId(0)).state, store::RepoState::kErroring);

  ASSERT_TRUE(cdn_front_->Restart().ok());
  const pipeline::PollReport up = PollOne(RepoId(0));
  ASSERT_TRUE(up.ok) << up.error;
  EXPECT_EQ(up.revisions, 1);
  EXPECT_EQ(Revisions(RepoId(0)), 1u);
  EXPECT_FALSE(Log(*cdn_front_, "cdn").empty());
  EXPECT_EQ(Record(RepoId(0)).state, store::RepoState::kOk);
}

TEST_F(TlsWireTest, RedirectFromHttpsToHttpIsRefused) {
  // The Hub (behind TLS) sends LFS reads to a CDN origin that is cleartext.
  const uint16_t cdn_port = FreePort("127.0.0.2");
  StartWire(1, Good(), true, "http://127.0.0.2:" + std::to_string(cdn_port));
  auto [got, stats] = hub::Await<hub::FileContent>(io_, [&](auto done) {
    stack_->client().ResolveGet(RepoId(0), "main", "model.safetensors", std::move(done));
  });
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().ToString().find("refused a redirect from https to http://127.0.0.2"),
            std::string::npos)
      << got.error().ToString();
  EXPECT_EQ(FakehubRequests("cdn"), 0u) << "nothing may follow a redirect out of TLS";
  EXPECT_EQ(FakehubRequests("hub"), 1u);
  // A HEAD does not follow the CDN redirect: it reports where the content lives, refusing nothing.
  auto [head, head_stats] = hub::Await<hub::ResolvedFile>(io_, [&](auto done) {
    stack_->client().ResolveHead(RepoId(0), "main", "model.safetensors", std::move(done));
  });
  ASSERT_TRUE(head.ok()) << head.error().ToString();
  EXPECT_TRUE(head->location.starts_with("http://127.0.0.2:")) << head->location;
  EXPECT_EQ(FakehubRequests("cdn"), 0u);
}

}  // namespace
}  // namespace hubwatch::tls_test
