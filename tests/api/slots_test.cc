// Connection slots under load: event streams have a limit of their own below max_connections,
// health probes answer when every slot is taken, and a client that never reads its replies is
// dropped.

#include <memory>
#include <vector>

#include "daemon/api/server_core.h"
#include "tests/api/api_env.h"
#include "tests/daemon/wait_until.h"

namespace hubwatch::api::testing {
namespace {

using std::chrono::milliseconds;

bool HasHead(const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; }

// Opens GET /api/v1/stream?after=0 and reads the reply's head (and what follows it at once).
std::string OpenStream(RawConnection& c) {
  c.Send("GET /api/v1/stream?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  return c.ReadUntil(HasHead, milliseconds(3000));
}

// A keep-alive client that was served once and now sits idle in a general slot.
std::unique_ptr<RawConnection> IdleClient(uint16_t port) {
  auto c = std::make_unique<RawConnection>(port);
  c->Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  c->ReadUntil(
      [](const std::string& s) { return s.find("{\"status\":\"ok\"}") != std::string::npos; },
      milliseconds(3000));
  return c;
}

TEST_F(ApiTest, StreamsOverTheirLimitAre503AndProbesAndReadsStillAnswer) {
  config_.max_connections = 8;  // at most 4 streams
  StartServer();
  std::vector<std::unique_ptr<RawConnection>> streams;
  int open = 0, refused = 0;
  for (int i = 0; i < 10; ++i) {  // more streams than the limit, and than max_connections
    auto c = std::make_unique<RawConnection>(port_);
    const std::string head = OpenStream(*c);
    if (head.rfind("HTTP/1.1 200 OK\r\n", 0) == 0) {
      ++open;
      streams.push_back(std::move(c));
    } else {
      EXPECT_EQ(ParseResponse(head + c->ReadToEof(milliseconds(2000))).status, 503) << head;
      ++refused;
    }
  }
  EXPECT_EQ(open, 4);
  EXPECT_EQ(refused, 6);
  // The streams stay open, and the other slots serve everyone else.
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Get("/readyz").status, 200);
  HttpResponse r = Get("/api/v1/repos");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["repos"].size(), 2u);

  // Every general slot taken (4 streams + 4 idle clients): probes still answer, from the
  // reserve, one request per connection; anything else is 503.
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(IdleClient(port_));
  r = Get("/api/v1/repos");
  EXPECT_EQ(r.status, 503) << r.raw.substr(0, 300);
  EXPECT_EQ(r.header("retry-after"), "1");
  for (int i = 0; i < 20; ++i) {  // more than the reserve: each probe frees its slot
    ASSERT_EQ(Get("/healthz").status, 200) << i;
    ASSERT_EQ(Get("/readyz").status, 200) << i;
  }
  r = Request(port_, "GET", "/healthz", "", {{"Connection", "keep-alive"}});
  EXPECT_EQ(r.header("connection"), "close");

  // One stream leaves: there is room for another.
  streams.pop_back();
  EXPECT_TRUE(hubwatch::testing::WaitUntil([&] {
    RawConnection c(port_);
    return OpenStream(c).rfind("HTTP/1.1 200 OK\r\n", 0) == 0;
  }));
}

TEST_F(ApiTest, AStreamOverTheLimitSaysWhy) {
  config_.max_connections = 2;  // one stream
  StartServer();
  RawConnection first(port_);
  ASSERT_EQ(OpenStream(first).rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  RawConnection second(port_);
  const HttpResponse r = ParseResponse(OpenStream(second) + second.ReadToEof(milliseconds(2000)));
  EXPECT_EQ(r.status, 503) << r.raw;
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("retry-after"), "5");
  const std::string error = ErrorOf(r);
  EXPECT_NE(error.find("too many event streams"), std::string::npos) << r.body;
  EXPECT_NE(error.find("1 are open"), std::string::npos) << r.body;
  EXPECT_NE(Get("/metrics").body.find("hubwatch_sse_streams_rejected_total 1"), std::string::npos);
}

// A client that sends requests and never reads the replies holds one reply at a time, and is
// dropped once a write has stalled for read_timeout_s.
TEST_F(ApiTest, AClientThatNeverReadsIsDropped) {
  config_.read_timeout_s = 1;
  StartServer();
  RawConnection c(port_, /*receive_buffer=*/4096);
  std::string requests;
  const std::string one = "GET /api/v1/advisories/feed.atom HTTP/1.1\r\nHost: x\r\n\r\n";
  while (requests.size() < (64u << 10)) requests += one;
  // About 1,200 requests for a 70 KB feed: their replies fill the small window and the
  // server's send buffer (autotuned up to a few MiB) after about a hundred.
  c.Send(requests);
  // The server's write deadline (read_timeout_s, real time: the HTTP session's timer is not on
  // the clock seam) drops it; the gauge counts the connection that asks too.
  EXPECT_TRUE(hubwatch::testing::WaitUntil([&] {
    return Get("/metrics").body.find("hubwatch_http_connections 1\n") != std::string::npos;
  }));
}

// A slow-loris flood: more connections than every slot holds, general and probe, each sending
// the start of a request (a header, or a probe's header, or a probe's body) and then nothing.
// Health probes still answer at once, while the flood stalls (no timeout has run out: the probe
// slots the flood held went to the probes).
TEST_F(ApiTest, ProbesAnswerDuringASlowHeaderFlood) {
  config_.max_connections = 4;
  config_.header_timeout_s = 60;
  StartServer();
  const std::string starts[] = {
      "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ", "GET /healthz HTTP/1.1\r\nHost: x\r\n",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"};
  std::vector<std::unique_ptr<RawConnection>> flood;
  for (int i = 0; i < 2 * (config_.max_connections + kProbeSlots); ++i) {
    flood.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(flood.back()->connected()) << i;
    flood.back()->Send(starts[i % 3]);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 2 * kProbeSlots; ++i) {
    HttpResponse r = Get(i % 2 ? "/readyz" : "/healthz");
    ASSERT_EQ(r.status, 200) << i << " " << r.raw.substr(0, 300);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(1500)) << "within the 2 s a "
                                                                           "probe slot waits";
  // Every other route still gets its 503 while the general slots are held.
  HttpResponse r = Get("/api/v1/repos");
  EXPECT_EQ(r.status, 503) << r.raw.substr(0, 300);
  // The general slots' stalled connections are still open: they were not what made room.
  for (int i = 0; i < config_.max_connections; ++i) {
    EXPECT_FALSE(flood[i]->ClosedWithin(milliseconds(1))) << i;
  }
}

}  // namespace
}  // namespace hubwatch::api::testing
