// The HTTP layer under untrusted input: unknown routes and methods, body limits, malformed
// requests, huge headers, slow clients, keep-alive, the connection cap; and the operations
// endpoints (metrics, health, readiness).

#include <random>

#include "tests/api/api_env.h"
#include "tests/daemon/wait_until.h"

namespace hubwatch::api::testing {
namespace {

using std::chrono::milliseconds;

void ExpectJsonError(const HttpResponse& r, int status) {
  EXPECT_EQ(r.status, status) << r.raw.substr(0, 500);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_TRUE(r.json().is_object() && r.json()["error"].is_string()) << r.body;
}

std::string Exchange(uint16_t port, const std::string& bytes,
                     milliseconds timeout = milliseconds(5000)) {
  RawConnection c(port);
  c.Send(bytes);
  return c.ReadToEof(timeout);
}

TEST_F(ApiTest, UnknownRoutesAndMethods) {
  StartServer();
  ExpectJsonError(Get("/api/v2/anything"), 404);
  ExpectJsonError(Get("/nowhere"), 404);  // "/" is the index of the model pages
  HttpResponse r = Request(port_, "PUT", "/api/v1/repos");
  ExpectJsonError(r, 405);
  EXPECT_EQ(r.header("allow"), "GET, HEAD, POST");
  r = Request(port_, "POST", "/api/v1/advisories/feed.atom");
  ExpectJsonError(r, 405);
  EXPECT_EQ(r.header("allow"), "GET, HEAD");
  // A route that would match but for the encoding (NUL) is a bad request, not an unknown one.
  ExpectJsonError(Get("/api/v1/repos/%00/x/revisions"), 400);
}

TEST_F(ApiTest, BodiesOverTheLimitAre413) {
  StartServer();
  const std::string big(config_.max_body_bytes + 1, '{');
  ExpectJsonError(Post("/v1/query", big), 413);
  // Just under the limit is read (and is bad JSON).
  ExpectJsonError(Post("/v1/query", std::string(config_.max_body_bytes, '[')), 400);
  // The plan endpoint has its own, smaller limit.
  ExpectJsonError(Post("/api/v1/plan", std::string(config_.max_plan_body_bytes + 1, ' ')), 413);
  ExpectJsonError(Post("/v1/query", std::string(config_.max_plan_body_bytes + 1, ' ')), 400);
  // A chunked body is counted as it arrives.
  RawConnection c(port_);
  c.Send("POST /v1/query HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  const std::string chunk(1 << 20, 'a');
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
  for (int i = 0; i < 5 && c.Send(size + chunk + "\r\n"); ++i) {
  }
  ExpectJsonError(ParseResponse(c.ReadToEof(milliseconds(5000))), 413);
}

// Nesting is refused before parsing: 4 MiB of '[' would cost the parser ~300 MB of nodes.
TEST_F(ApiTest, DeeplyNestedBodiesAre400BeforeParsing) {
  StartServer();
  const std::string deep = "{\"commit\": " + std::string(100, '[') + std::string(100, ']') + "}";
  HttpResponse r = Post("/v1/query", deep);
  ExpectJsonError(r, 400);
  EXPECT_NE(r.body.find("deeper than 64 levels"), std::string::npos) << r.body;
  r = Post("/v1/query", std::string(config_.max_body_bytes, '['));
  ExpectJsonError(r, 400);
  EXPECT_NE(r.body.find("deeper than 64 levels"), std::string::npos) << r.body;
  // 64 levels are parsed (and then judged as a query).
  r = Post("/v1/query", "{\"commit\": " + std::string(63, '[') + std::string(63, ']') + "}");
  EXPECT_EQ(r.body.find("deeper than"), std::string::npos) << r.body;
}

TEST_F(ApiTest, ExpectContinueGetsAnInterimResponse) {
  StartServer();
  RawConnection c(port_);
  const std::string body = R"({"commit": "0000000000000000000000000000000000000000"})";
  c.Send(
      "POST /v1/query HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n");
  const std::string interim =
      c.ReadUntil([](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; },
                  milliseconds(2000));
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  c.Send(body);
  const HttpResponse r = ParseResponse(c.ReadToEof(milliseconds(5000)));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{}");
}

TEST_F(ApiTest, MalformedRequestsGet400AndHugeHeaders431) {
  StartServer();
  ExpectJsonError(ParseResponse(Exchange(port_, "GARBAGE\r\n\r\n")), 400);
  ExpectJsonError(ParseResponse(Exchange(port_, "GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n")),
                  400);
  ExpectJsonError(
      ParseResponse(Exchange(port_, "GET http://x/healthz HTTP/1.1\r\nHost: x\r\n\r\n")), 400);
  ExpectJsonError(ParseResponse(Exchange(port_,
                                         "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                                         "Content-Length: 7\r\n\r\n")),
                  400);
  const std::string huge =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n";
  ExpectJsonError(ParseResponse(Exchange(port_, huge)), 431);
  // Random bytes never take the server down.
  std::mt19937 rng(5);
  for (int i = 0; i < 50; ++i) {
    std::string noise(1 + rng() % 3000, '\0');
    for (char& ch : noise) ch = static_cast<char>(rng());
    if (i % 2) noise = "POST /v1/query HTTP/1.1\r\n" + noise;
    Exchange(port_, noise, milliseconds(300));
  }
  EXPECT_EQ(Get("/healthz").status, 200);
}

// A bad chunk size is a malformed request: 400 and close, not a silent close.
TEST_F(ApiTest, ABadChunkSizeIs400) {
  StartServer();
  for (const char* chunks :
       {"zz\r\n{}\r\n0\r\n\r\n", "2\r\n{}\r\n-1\r\n\r\n", "ffffffffffffffffff\r\n{}\r\n"}) {
    const HttpResponse r = ParseResponse(Exchange(
        port_,
        std::string("POST /v1/query HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n") +
            chunks));
    ExpectJsonError(r, 400);
    EXPECT_NE(ErrorOf(r).find("malformed request body"), std::string::npos) << r.body;
    EXPECT_EQ(r.header("connection"), "close");
  }
  EXPECT_EQ(Get("/healthz").status, 200);
}

// HEAD is GET without the body: the same status and headers, Content-Length included.
TEST_F(ApiTest, HeadAnswersAsGetWithoutTheBody) {
  StartServer();
  const std::string llama = std::string("/api/v1/repos/") + kLlama;
  for (const std::string& target :
       {std::string("/healthz"), llama + "/estimate", llama, std::string("/api/v1/advisories"),
        std::string("/api/v1/nope")}) {
    const HttpResponse get = Get(target);
    const std::string raw =
        Exchange(port_, "HEAD " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const HttpResponse head = ParseResponse(raw, /*to_head=*/true);
    EXPECT_EQ(head.status, get.status) << target << "\n" << raw;
    EXPECT_EQ(head.header("content-length"), std::to_string(get.body.size())) << target;
    EXPECT_EQ(head.header("content-type"), get.header("content-type")) << target;
    EXPECT_EQ(raw.size(), raw.find("\r\n\r\n") + 4) << target << ": a body followed";
  }
  // The framing holds on a kept-alive connection: HEAD, then GET.
  RawConnection c(port_);
  c.Send(
      "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n"
      "Connection: close\r\n\r\n");
  const std::string both = c.ReadToEof(milliseconds(5000));
  const size_t second = both.find("HTTP/1.1 200 OK", 1);
  ASSERT_NE(second, std::string::npos) << both;
  EXPECT_EQ(both.find("{\"status\":\"ok\"}"), both.size() - 15) << both;
  // A route without GET still answers 405, and GET routes list HEAD as allowed.
  HttpResponse r = Request(port_, "HEAD", "/v1/query");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("allow"), "POST");
  r = Request(port_, "PUT", "/healthz");
  EXPECT_EQ(r.header("allow"), "GET, HEAD");
}

TEST_F(ApiTest, SlowClientsAreCutOff) {
  config_.header_timeout_s = 1;
  config_.read_timeout_s = 1;
  StartServer();
  {
    // A header that never ends.
    RawConnection c(port_);
    c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(c.ClosedWithin(milliseconds(4000)));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(3000));
  }
  {
    // A body that never arrives: 408.
    RawConnection c(port_);
    c.Send("POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"comm");
    ExpectJsonError(ParseResponse(c.ReadToEof(milliseconds(4000))), 408);
  }
  {
    // An idle keep-alive connection goes after the header timeout.
    RawConnection c(port_);
    c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string first = c.ReadUntil(
        [](const std::string& s) { return s.find("{\"status\":\"ok\"}") != std::string::npos; },
        milliseconds(2000));
    EXPECT_EQ(ParseResponse(first).status, 200);
    EXPECT_TRUE(c.ClosedWithin(milliseconds(4000)));
  }
}

TEST_F(ApiTest, KeepAliveAnswersPipelinedRequestsInOrder) {
  StartServer();
  RawConnection c(port_);
  c.Send(
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/repos/ns/none HTTP/1.1\r\nHost: "
      "x\r\n\r\n"
      "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string all = c.ReadToEof(milliseconds(5000));
  const size_t second = all.find("HTTP/1.1 404");
  const size_t third = all.find("HTTP/1.1 200", 1);
  EXPECT_EQ(all.rfind("HTTP/1.1 200 OK", 0), 0u) << all;
  ASSERT_NE(second, std::string::npos) << all;
  ASSERT_NE(third, std::string::npos) << all;
  EXPECT_LT(second, third);
  EXPECT_NE(all.find("Connection: close"), std::string::npos);
}

TEST_F(ApiTest, ConnectionCapAnswers503) {
  config_.max_connections = 2;
  StartServer();
  auto a = std::make_unique<RawConnection>(port_);
  RawConnection b(port_);
  ASSERT_TRUE(a->connected() && b.connected());
  // Both held open; make sure the server accepted them.
  a->Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  b.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  a->ReadUntil([](const std::string& s) { return s.find("}") != std::string::npos; },
               milliseconds(2000));
  b.ReadUntil([](const std::string& s) { return s.find("}") != std::string::npos; },
              milliseconds(2000));
  HttpResponse r = Get("/api/v1/repos");
  ExpectJsonError(r, 503);
  EXPECT_EQ(r.header("retry-after"), "1");
  EXPECT_EQ(Get("/healthz").status, 200);  // probes have slots of their own
  a.reset();                               // one leaves: there is room again
  // The server frees the slot when it sees the close.
  EXPECT_TRUE(hubwatch::testing::WaitUntil([&] { return Get("/api/v1/repos").status == 200; }));
  EXPECT_NE(Get("/metrics").body.find("hubwatch_http_connections_rejected_total"),
            std::string::npos);
}

TEST_F(ApiTest, MetricsHealthAndReadiness) {
  StartServer();
  HttpResponse r = Get("/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json(), (nlohmann::json{{"status", "ok"}}));
  r = Get("/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["detail"], "watching 2 repos; last cycle 3s ago");
  control_.ready_ = false;
  ExpectJsonError(Get("/readyz"), 503);
  Get("/api/v1/repos/ns/none/badge");
  r = Get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find(
                "hubwatch_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("hubwatch_http_requests_total{route=\"/api/v1/repos/{ns}/{name}/badge\","
                        "method=\"GET\",status=\"404\"} 1"),
            std::string::npos);
  EXPECT_NE(r.body.find("hubwatch_http_request_duration_seconds_bucket{route=\"/readyz\""),
            std::string::npos);
  EXPECT_NE(r.body.find("# TYPE hubwatch_http_request_duration_seconds histogram"),
            std::string::npos);
}

}  // namespace
}  // namespace hubwatch::api::testing
