// Contract tests: the advisory list, the Atom feed and the Server-Sent Events stream.

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "tests/api/api_env.h"

namespace hubwatch::api::testing {
namespace {

TEST_F(ApiTest, AdvisoriesBySeqWithFilters) {
  StartServer();
  const std::vector<store::AdvisoryRecord> all = Advisories();
  ASSERT_GE(all.size(), 6u);
  HttpResponse r = Get("/api/v1/advisories");
  ASSERT_EQ(r.status, 200);
  nlohmann::json list = r.json()["advisories"];
  ASSERT_EQ(list.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(list[i]["id"], all[i].id);
    EXPECT_EQ(list[i]["seq"], all[i].seq);
    EXPECT_EQ(list[i]["summary"], all[i].osv["summary"]);
    EXPECT_EQ(list[i]["revision"], all[i].sha);
  }
  EXPECT_FALSE(r.json().contains("next_after"));

  r = Get(std::string("/api/v1/advisories?repo=") + kMistral + "&kind=chat_template");
  ASSERT_EQ(r.status, 200);
  size_t templates = 0;
  for (const auto& a : all) templates += a.repo == kMistral && a.kind == "chat_template";
  ASSERT_GT(templates, 0u);
  EXPECT_EQ(r.json()["advisories"].size(), templates);

  // Paging by seq.
  r = Get("/api/v1/advisories?limit=2&after=" + std::to_string(all[1].seq));
  ASSERT_EQ(r.status, 200);
  list = r.json()["advisories"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["seq"], all[2].seq);
  EXPECT_EQ(r.json()["next_after"], all[3].seq);

  // The time hubwatch wrote them (at ingestion) has its own filter...
  EXPECT_EQ(
      Get("/api/v1/advisories?modified_since=2024-12-02T13:12:35Z").json()["advisories"].size(),
      all.size());
  EXPECT_EQ(Get("/api/v1/advisories?modified_since=2024-12-03").json()["advisories"].size(), 0u);
  // ...while since= is the commit time, as for changes: by the revisions' own dates.
  std::vector<std::string> committed;
  for (const auto& a : all) {
    committed.push_back(a.osv["database_specific"].value("committed_at", ""));
  }
  std::sort(committed.begin(), committed.end());
  const std::string middle = committed[committed.size() / 2];
  ASSERT_NE(middle, committed.front()) << "the fixtures' advisories span several commits";
  const size_t from_middle = static_cast<size_t>(
      committed.end() - std::lower_bound(committed.begin(), committed.end(), middle));
  EXPECT_EQ(Get("/api/v1/advisories?since=" + middle).json()["advisories"].size(), from_middle);

  EXPECT_EQ(Get("/api/v1/advisories?repo=bad--repo").status, 400);
  EXPECT_EQ(Get("/api/v1/advisories?kind=nope").status, 400);
  EXPECT_EQ(Get("/api/v1/advisories?since=soon").status, 400);
  EXPECT_EQ(Get("/api/v1/advisories?since=abcdef0").status, 400);  // a revision needs repo=
  EXPECT_EQ(Get("/api/v1/advisories?affects=abcdef0").status, 400);
  EXPECT_EQ(Get("/api/v1/advisories?limit=-1").status, 400);
}

int CheckAtom(const std::string& body, size_t entries) {
  const std::string path = ::testing::TempDir() + "hubwatch_api_feed.atom";
  std::ofstream(path) << body;
  const std::string cmd = std::string("python3 ") + HUBWATCH_API_TEST_DIR + "/check_atom.py " +
                          path + " " + std::to_string(entries);
  const int rc = std::system(cmd.c_str());
  std::remove(path.c_str());
  return rc;
}

TEST_F(ApiTest, AtomFeedIsValidAndNewestFirst) {
  StartServer();
  const std::vector<store::AdvisoryRecord> all = Advisories();
  HttpResponse r = Get("/api/v1/advisories/feed.atom");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "application/atom+xml; charset=utf-8");
  EXPECT_EQ(CheckAtom(r.body, all.size()), 0) << r.body.substr(0, 2000);
  // Newest first: the first entry is the highest seq.
  const size_t first = r.body.find("<entry>");
  ASSERT_NE(first, std::string::npos);
  EXPECT_NE(r.body.find("advisory/" + all.back().id, first), std::string::npos);
  EXPECT_LT(r.body.find("advisory/" + all.back().id), r.body.find("advisory/" + all.front().id));
  EXPECT_NE(r.body.find("href=\"http://127.0.0.1:" + std::to_string(port_) + "/v1/vulns/" +
                        all.back().id + "\""),
            std::string::npos);

  size_t mistral = 0;
  for (const auto& a : all) mistral += a.repo == kMistral;
  r = Get(std::string("/api/v1/advisories/feed.atom?limit=3&repo=") + kMistral);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(CheckAtom(r.body, std::min<size_t>(3, mistral)), 0);
  EXPECT_NE(r.body.find("&amp;repo="), std::string::npos);  // the self link, escaped

  // Hostile bytes in a record still make a well-formed feed.
  const std::vector<std::string> ids =
      IngestNewRevision(kMistral, 1, "<script>&\x01\x1b[31m ]]> \xEF\xBF\xBF");
  r = Get("/api/v1/advisories/feed.atom?limit=1");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(CheckAtom(r.body, 1), 0);
  EXPECT_NE(r.body.find(ids[0]), std::string::npos);
  // No advisories at all: still a valid feed.
  r = Get("/api/v1/advisories/feed.atom?repo=ns/none");
  EXPECT_EQ(CheckAtom(r.body, 0), 0) << r.body;
}

// An SSE client on a raw connection: the events it has read so far.
class SseClient {
 public:
  SseClient(uint16_t port, const std::string& target, const Headers& headers = {}) : conn_(port) {
    std::string req =
        "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n";
    for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
    conn_.Send(req + "\r\n");
  }
  // Reads until `n` events arrived (or 5 s); returns their ids.
  std::vector<int64_t> WaitForEvents(size_t n) {
    received_ +=
        conn_.ReadUntil([&](const std::string& more) { return Ids(received_ + more).size() >= n; },
                        std::chrono::seconds(5));
    return Ids(received_);
  }
  // Reads for `d` and returns everything received so far.
  const std::string& ReadFor(std::chrono::milliseconds d) {
    received_ += conn_.ReadUntil(nullptr, d);
    return received_;
  }
  static std::vector<int64_t> Ids(const std::string& text) {
    std::vector<int64_t> ids;
    static const std::regex kEvent("id: (\\d+)\nevent: advisory\ndata: (\\{[^\n]*\\})\n\n");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kEvent);
         it != std::sregex_iterator(); ++it) {
      EXPECT_TRUE(nlohmann::json::accept((*it)[2].str())) << (*it)[2];
      ids.push_back(std::stoll((*it)[1]));
    }
    return ids;
  }
  const std::string& received() const { return received_; }

 private:
  RawConnection conn_;
  std::string received_;
};

TEST_F(ApiTest, StreamSendsNewAdvisoriesWithHeartbeats) {
  StartServer();
  const int64_t max_seq = Advisories().back().seq;
  SseClient client(port_, "/api/v1/stream");
  const std::string& head = client.ReadFor(std::chrono::milliseconds(500));
  ASSERT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Type: text/event-stream; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\n\r\nretry: 5000\n"), std::string::npos);
  EXPECT_NE(head.find("\n: keep-alive\n\n"), std::string::npos);  // heartbeat every 200 ms
  EXPECT_TRUE(SseClient::Ids(head).empty());                      // no replay without Last-Event-ID

  IngestNewRevision(kMistral, 2);
  OnNetwork([this] { server_->OnNewAdvisories(); });
  EXPECT_EQ(client.WaitForEvents(2), (std::vector<int64_t>{max_seq + 1, max_seq + 2}))
      << client.received();
}

TEST_F(ApiTest, StreamResumesAfterLastEventId) {
  StartServer();
  const std::vector<store::AdvisoryRecord> all = Advisories();
  {
    SseClient client(port_, "/api/v1/stream", {{"Last-Event-ID", std::to_string(all[2].seq)}});
    std::vector<int64_t> expected;
    for (size_t i = 3; i < all.size(); ++i) expected.push_back(all[i].seq);
    EXPECT_EQ(client.WaitForEvents(expected.size()), expected) << client.received();
  }
  {
    // From the start; ?after= works where a client cannot set headers.
    SseClient client(port_, "/api/v1/stream?after=0");
    EXPECT_EQ(client.WaitForEvents(all.size()).size(), all.size());
  }
  {
    // A filtered stream skips other repos' advisories, live and replayed.
    SseClient client(port_, std::string("/api/v1/stream?after=0&repo=") + kLlama);
    size_t llama = 0;
    for (const auto& a : all) llama += a.repo == kLlama;
    IngestNewRevision(kMistral, 1);
    OnNetwork([this] { server_->OnNewAdvisories(); });
    client.ReadFor(std::chrono::milliseconds(400));
    EXPECT_EQ(SseClient::Ids(client.received()).size(), llama);
  }
  EXPECT_EQ(Get("/api/v1/stream", {{"Last-Event-ID", "yesterday"}}).status, 400);
}

TEST_F(ApiTest, StreamsEndCleanlyOnStop) {
  StartServer();
  SseClient a(port_, "/api/v1/stream");
  SseClient b(port_, "/api/v1/stream?after=0");
  b.WaitForEvents(1);
  StopServer();  // returns only once every session is gone (the io_context ran out of work)
  EXPECT_FALSE(RawConnection(port_).connected());
}

}  // namespace
}  // namespace hubwatch::api::testing
