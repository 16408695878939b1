// GET /api/models as the Hub answers it (reference §11): sort keys and descending order, expand,
// default fields, 400s, the opaque Link cursor, filters, the replay clock, private and gated
// repos, synthetic owners and background churn.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "tests/fakehub/fixture_loader.h"
#include "tests/fakehub/synthetic.h"
#include "tests/fakehub/test_support.h"
#include "tracker/hub/curl_transport.h"

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;
using testing::Handle;
using testing::HeaderOf;

const std::string kOrigin = "http://127.0.0.1:1";

std::vector<Repo> Fixtures() {
  auto repos = LoadFixtureRepos(std::string(HUBWATCH_FIXTURES_DIR) + "/hub");
  EXPECT_TRUE(repos.ok()) << repos.error().message;
  return repos.ok() ? std::move(repos).value() : std::vector<Repo>{};
}

std::unique_ptr<HubState> MakeState(FakeHubOptions options, std::vector<Repo> repos) {
  auto state = std::make_unique<HubState>(std::move(options), std::move(repos));
  state->SetOrigins(kOrigin, "http://127.0.0.2:1");
  return state;
}

json List(HubState& state, const std::string& query, HeaderList headers = {}) {
  FakeResponse r = Handle(state, "GET", "/api/models?" + query, "", std::move(headers));
  EXPECT_EQ(r.status, 200) << query << ": " << r.body;
  json list = json::parse(r.body, nullptr, false);
  EXPECT_TRUE(list.is_array()) << r.body;
  return list;
}

std::vector<std::string> Ids(const json& list) {
  std::vector<std::string> ids;
  for (const json& item : list) ids.push_back(item["id"]);
  return ids;
}

// The target of Link rel="next", made relative to the origin; "" when there is none.
std::string NextPath(const FakeResponse& r) {
  const std::string link = HeaderOf(r, "Link");
  if (link.empty()) return "";
  EXPECT_TRUE(link.ends_with(">; rel=\"next\"")) << link;
  std::string url = link.substr(1, link.find('>') - 1);
  EXPECT_TRUE(url.starts_with(kOrigin)) << url;
  return url.substr(kOrigin.size());
}

TEST(Listing, SortsNewestFirstWithTheHubsDefaultFields) {
  auto state = MakeState({}, Fixtures());
  json by_modified = List(*state, "sort=lastModified");
  ASSERT_EQ(by_modified.size(), 8u);
  EXPECT_EQ(by_modified[0]["id"], "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B");
  EXPECT_EQ(by_modified[1]["id"], "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(by_modified[7]["id"], "google/gemma-7b-it");
  for (size_t i = 0; i < by_modified.size(); ++i) {
    const json& item = by_modified[i];
    for (const char* key : {"_id", "id", "likes", "trendingScore", "private", "downloads", "tags",
                            "createdAt", "modelId", "lastModified"}) {
      EXPECT_TRUE(item.contains(key)) << key << " in " << item.dump();
    }
    for (const char* key : {"sha", "gated", "author", "siblings"}) {
      EXPECT_FALSE(item.contains(key)) << key << " in " << item.dump();
    }
    EXPECT_TRUE(std::regex_match(item["lastModified"].get<std::string>(),
                                 std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z)")));
    if (i > 0) {
      EXPECT_GE(by_modified[i - 1]["lastModified"], item["lastModified"]);
    }
  }
  json by_created = List(*state, "sort=createdAt&direction=-1");
  ASSERT_EQ(by_created.size(), 8u);
  EXPECT_EQ(by_created[0]["id"], "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B");
  EXPECT_EQ(by_created[7]["id"], "google/gemma-7b-it");
  for (size_t i = 0; i < by_created.size(); ++i) {
    EXPECT_FALSE(by_created[i].contains("lastModified")) << "only with sort=lastModified";
    if (i > 0) {
      EXPECT_GE(by_created[i - 1]["createdAt"], by_created[i]["createdAt"]);
    }
  }
}

TEST(Listing, OtherSortKeysAreDescending) {
  SyntheticOptions s;
  s.repos = 5;
  s.tensors_per_file = 0;
  std::vector<Repo> repos = GenerateSyntheticRepos(s);
  const uint64_t downloads[] = {30, 500, 7, 90, 1};
  for (size_t i = 0; i < repos.size(); ++i) {
    repos[i].downloads = downloads[i];
    repos[i].likes = 100 - downloads[i];
  }
  auto state = MakeState({}, std::move(repos));
  EXPECT_EQ(Ids(List(*state, "sort=downloads")),
            (std::vector<std::string>{"synthetic/model-00001", "synthetic/model-00003",
                                      "synthetic/model-00000", "synthetic/model-00002",
                                      "synthetic/model-00004"}));
  EXPECT_EQ(Ids(List(*state, "sort=likes")).front(), "synthetic/model-00004");
  EXPECT_EQ(Ids(List(*state, "sort=trendingScore")).front(), "synthetic/model-00004");
  EXPECT_EQ(Ids(List(*state, "sort=id")).front(), "synthetic/model-00004");
}

TEST(Listing, ExpandReturnsOnlyTheAskedProperties) {
  auto state = MakeState({}, Fixtures());
  json list = List(*state, "sort=lastModified&expand%5B%5D=sha&expand[]=lastModified&limit=100");
  ASSERT_EQ(list.size(), 8u);
  for (const json& item : list) {
    std::set<std::string> keys;
    for (const auto& [k, v] : item.items()) keys.insert(k);
    EXPECT_EQ(keys, (std::set<std::string>{"_id", "id", "sha", "lastModified"})) << item.dump();
    const std::string id = item["id"];
    json refs = json::parse(Handle(*state, "GET", "/api/models/" + id + "/refs").body);
    EXPECT_EQ(item["sha"], refs["branches"][0]["targetCommit"]) << id;
    json commits = json::parse(Handle(*state, "GET", "/api/models/" + id + "/commits/main").body);
    EXPECT_EQ(item["lastModified"], commits[0]["date"]) << "the head commit's date: " << id;
  }
  json repeated = List(*state, "author=google&expand=gated&expand=author");
  ASSERT_EQ(repeated.size(), 2u);
  for (const json& item : repeated) {
    EXPECT_EQ(item.size(), 4u) << item.dump();
    EXPECT_EQ(item["gated"], "manual");
    EXPECT_EQ(item["author"], "google");
  }
  EXPECT_EQ(List(*state, "search=Phi-3&expand[]=gated")[0]["gated"], false);
}

TEST(Listing, RejectsWhatTheHubRejects) {
  auto state = MakeState({}, Fixtures());
  FakeResponse first = Handle(*state, "GET", "/api/models?sort=lastModified&limit=2");
  const std::string next = NextPath(first);
  const std::string cursor = next.substr(next.find("cursor=") + 7);
  for (const std::string& query : std::vector<std::string>{
           "expand[]=nonsense", "expand=sha&expand=bogus", "sort=last_modified",
           "sort=downloads&direction=1", "sort=lastModified&direction=asc",
           "sort=lastModified&direction=-1&direction=1", "limit=ten", "limit=0",
           "sort=lastModified&cursor=2", "sort=likes&cursor=" + cursor,
           "sort=lastModified&cursor=" + cursor + "x"}) {
    FakeResponse r = Handle(*state, "GET", "/api/models?" + query);
    EXPECT_EQ(r.status, 400) << query;
    json body = json::parse(r.body, nullptr, false);
    EXPECT_TRUE(body.is_object() && body["error"].is_string()) << query << ": " << r.body;
  }
  EXPECT_EQ(Handle(*state, "GET", "/api/models?sort=lastModified&cursor=" + cursor).status, 200);
  EXPECT_EQ(List(*state, "limit=5000").size(), 8u) << "limit is capped, not refused";
}

TEST(Listing, FiltersByAuthorSearchAndTag) {
  auto state = MakeState({}, Fixtures());
  json llama = List(*state, "author=meta-llama");
  ASSERT_EQ(llama.size(), 3u);
  for (const json& item : llama)
    EXPECT_TRUE(item["id"].get<std::string>().starts_with("meta-llama/"));
  EXPECT_EQ(List(*state, "author=meta").size(), 0u) << "one whole owner, not a prefix";
  EXPECT_EQ(List(*state, "search=LLAMA-3").size(), 3u) << "case-insensitive substring";
  EXPECT_EQ(List(*state, "search=llama&search=instruct").size(), 2u);
  EXPECT_EQ(List(*state, "filter=license:mit").size(), 2u);
  EXPECT_EQ(List(*state, "filter=license:mit&filter=phi3").size(), 1u);
}

TEST(Listing, FollowsTheReplayClock) {
  FakeHubOptions options;
  options.mode = Mode::kReplay;
  options.speed = 0;
  options.replay_start = ParseIsoTime("2024-04-18T00:00:00.000Z");
  auto state = MakeState(options, Fixtures());
  const std::string q = "sort=lastModified&expand[]=sha&expand[]=lastModified";
  json before = List(*state, q);
  EXPECT_EQ(Ids(before),
            (std::vector<std::string>{"meta-llama/Meta-Llama-3-8B-Instruct",
                                      "meta-llama/Meta-Llama-3-8B", "google/gemma-7b-it"}));
  for (const json& item : before) EXPECT_LE(item["lastModified"], "2024-04-18T00:00:00.000Z");
  state->AdvanceReplayClock(std::chrono::hours(24 * 2));
  json after = List(*state, q);
  ASSERT_EQ(after.size(), 3u);
  const json& instruct =
      after[0]["id"] == "meta-llama/Meta-Llama-3-8B-Instruct" ? after[0] : after[1];
  EXPECT_EQ(instruct["id"], "meta-llama/Meta-Llama-3-8B-Instruct");
  EXPECT_EQ(instruct["sha"], "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf");
  EXPECT_GT(instruct["lastModified"], "2024-04-19T00:00:00.000Z");
  EXPECT_LE(instruct["lastModified"], "2024-04-20T00:00:00.000Z");
  EXPECT_EQ(after[2]["id"], "google/gemma-7b-it");
}

TEST(Listing, PrivateReposOnlyToATokenGatedToEveryone) {
  SyntheticOptions s;
  s.repos = 3;
  s.tensors_per_file = 0;
  std::vector<Repo> repos = GenerateSyntheticRepos(s);
  repos[1].is_private = true;
  repos[2].gated = "auto";
  FakeHubOptions options;
  options.users = {{"hf_alice", "alice", true}};
  auto state = MakeState(options, std::move(repos));
  EXPECT_EQ(Ids(List(*state, "sort=id")),
            (std::vector<std::string>{"synthetic/model-00002", "synthetic/model-00000"}));
  json authed = List(*state, "sort=id&expand[]=private&expand[]=gated",
                     {{"Authorization", "Bearer hf_alice"}});
  ASSERT_EQ(authed.size(), 3u);
  EXPECT_EQ(authed[1]["id"], "synthetic/model-00001");
  EXPECT_EQ(authed[1]["private"], true);
  EXPECT_EQ(authed[0]["gated"], "auto");
  EXPECT_EQ(authed[2]["gated"], false);
  EXPECT_EQ(Handle(*state, "GET", "/api/models", "", {{"Authorization", "Bearer nope"}}).status,
            401);
}

// Link carries every parameter and an opaque cursor; followed verbatim (absolute URL, through the
// real curl transport) it covers every repo exactly once, newest first.
TEST(Listing, LinkPagingOverTheWireCoversEveryRepoOnce) {
  FakeHubOptions options;
  options.fixtures_dir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
  SyntheticOptions s;
  s.repos = 230;
  s.tensors_per_file = 0;
  options.extra_repos = GenerateSyntheticRepos(s);
  auto hub = FakeHub::Start(std::move(options));
  ASSERT_TRUE(hub.ok()) << hub.error().message;
  boost::asio::io_context io;
  hub::CurlTransport transport(io);
  auto get = [&](const std::string& url) {
    hub::HttpRequest request;
    request.url = url;
    std::optional<hub::TransportOutcome> outcome;
    transport.Start(request, [&](hub::TransportOutcome o) { outcome = std::move(o); });
    while (!outcome) {
      io.restart();
      io.run_one_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(outcome->ok());
    return outcome->response;
  };
  std::string url =
      (*hub)->endpoint() +
      "/api/models?sort=lastModified&expand%5B%5D=sha&expand%5B%5D=lastModified&limit=25";
  std::vector<std::string> ids;
  std::string previous = "9999";
  int pages = 0;
  while (!url.empty() && pages < 50) {
    hub::HttpResponse page = get(url);
    ASSERT_EQ(page.status, 200) << url << ": " << page.body;
    ++pages;
    for (const json& item : json::parse(page.body)) {
      ids.push_back(item["id"]);
      EXPECT_LE(item["lastModified"].get<std::string>(), previous);
      previous = item["lastModified"];
    }
    const std::string link(page.headers.Get("Link").value_or(""));
    url = link.empty() ? "" : link.substr(1, link.find('>') - 1);
    if (url.empty()) continue;
    EXPECT_TRUE(url.starts_with((*hub)->endpoint() + "/api/models?")) << url;
    for (const char* param :
         {"sort=lastModified", "expand%5B%5D=sha", "expand%5B%5D=lastModified", "limit=25"}) {
      EXPECT_NE(url.find(param), std::string::npos) << param << " kept in " << url;
    }
    const std::string cursor = url.substr(url.find("cursor=") + 7);
    EXPECT_FALSE(cursor.empty());
    EXPECT_FALSE(std::all_of(cursor.begin(), cursor.end(), ::isdigit)) << "opaque: " << cursor;
  }
  EXPECT_EQ(pages, 10);  // 238 repos, 25 a page
  EXPECT_EQ(ids.size(), 238u);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size()) << "no repeats";
}

// Issue 18's discovery: a base_model relation filter with the expands a derivative walk asks for
// (the head sha, its date, the tags and the head's file names), paged by Link.
TEST(Listing, BaseModelFilterWithShaLastModifiedTagsAndSiblings) {
  std::vector<Repo> repos = Fixtures();
  auto more = LoadFixtureRepos(std::string(HUBWATCH_FIXTURES_DIR) + "/hub-derivatives");
  ASSERT_TRUE(more.ok()) << more.error().message;
  for (Repo& r : *more) repos.push_back(std::move(r));
  auto state = MakeState({}, std::move(repos));
  const std::string upstream = "meta-llama/Meta-Llama-3-8B-Instruct";
  const std::string q = "filter=base_model:finetune:" + upstream +
                        "&expand=sha&expand=lastModified&expand=tags&expand=siblings";
  json all = List(*state, q);
  EXPECT_EQ(Ids(all),
            (std::vector<std::string>{"tidewater-ml/Llama-3-8B-Instruct-Tidewater",
                                      "larkspur-nlp/Llama-3-8B-Instruct-Larkspur-DPO",
                                      "aldercrest-ai/Llama-3-8B-Instruct-Aldercrest-SFT"}));
  for (const json& item : all) {
    std::set<std::string> keys;
    for (const auto& [k, v] : item.items()) keys.insert(k);
    EXPECT_EQ(keys,
              (std::set<std::string>{"_id", "id", "sha", "lastModified", "tags", "siblings"}));
    const auto tags = item["tags"].get<std::vector<std::string>>();
    EXPECT_NE(std::find(tags.begin(), tags.end(), "base_model:" + upstream), tags.end());
    std::set<std::string> files;
    for (const json& s : item["siblings"]) {
      EXPECT_EQ(s.size(), 1u) << "rfilename only, as the Hub lists them";
      files.insert(s["rfilename"].get<std::string>());
    }
    for (const char* f :
         {"config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json",
          "special_tokens_map.json", "model-00001-of-00004.safetensors"}) {
      EXPECT_TRUE(files.count(f)) << item["id"] << " " << f;
    }
    json info = json::parse(Handle(*state, "GET",
                                   "/api/models/" + item["id"].get<std::string>() +
                                       "?expand=sha"
                                       "&expand=lastModified")
                                .body);
    EXPECT_EQ(item["sha"], info["sha"]) << "the main head";
    EXPECT_EQ(item["lastModified"], info["lastModified"]);
  }
  EXPECT_EQ(all[1]["lastModified"], "2024-04-26T09:12:44.000Z") << "the sync commit is the head";
  // Link paging keeps the filter and the expands; the encoded form matches the same repos.
  std::vector<std::string> walked;
  for (std::string next = "/api/models?" + q + "&limit=2"; !next.empty();) {
    FakeResponse page = Handle(*state, "GET", next);
    ASSERT_EQ(page.status, 200) << page.body;
    for (const json& item : json::parse(page.body)) {
      EXPECT_TRUE(item.contains("siblings"));
      walked.push_back(item["id"]);
    }
    next = NextPath(page);
  }
  EXPECT_EQ(walked, Ids(all));
  EXPECT_EQ(List(*state,
                 "filter=base_model%3Afinetune%3Ameta-llama%2FMeta-Llama-3-8B-Instruct"
                 "&expand%5B%5D=sha&expand%5B%5D=lastModified&expand%5B%5D=tags"
                 "&expand%5B%5D=siblings")
                .dump(),
            all.dump());
}

// Keyset paging: a repo that moves to the top mid-walk is not shown twice.
TEST(Listing, ARepoMovingMidWalkIsNotRepeated) {
  auto state = MakeState({}, Fixtures());
  FakeResponse first = Handle(*state, "GET", "/api/models?sort=lastModified&limit=3");
  std::vector<std::string> ids = Ids(json::parse(first.body));
  ASSERT_TRUE(
      state->PushCommit("google/gemma-7b-it", {{"README.md", "# new\n"}}, {}, "Update", "", nullptr)
          .ok());
  for (std::string next = NextPath(first); !next.empty();) {
    FakeResponse page = Handle(*state, "GET", next);
    for (const std::string& id : Ids(json::parse(page.body))) ids.push_back(id);
    next = NextPath(page);
  }
  EXPECT_EQ(ids.size(), 7u) << "gemma-7b-it moved above the cursor and is not seen in this walk";
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "google/gemma-7b-it"), 0);
  EXPECT_EQ(List(*state, "sort=lastModified&limit=1")[0]["id"], "google/gemma-7b-it");
}

TEST(SyntheticOwners, SkewedLikeTheHubAndDeterministic) {
  SyntheticOptions s;
  s.repos = 2000;
  s.owners = 100;
  s.commits = 2;
  s.tensors_per_file = 0;
  std::vector<Repo> repos = GenerateSyntheticRepos(s);
  ASSERT_EQ(repos.size(), 2000u);
  std::map<std::string, int> per_owner;
  const std::regex shape(R"(owner-\d{4}/model-(\d{5}))");
  for (size_t r = 0; r < repos.size(); ++r) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(repos[r].id, m, shape)) << repos[r].id;
    EXPECT_EQ(std::stoul(m[1].str()), r);
    ++per_owner[repos[r].id.substr(0, repos[r].id.find('/'))];
  }
  ASSERT_EQ(per_owner.size(), 100u) << "every owner has a repo";
  std::vector<int> sizes;
  for (const auto& [owner, n] : per_owner) sizes.push_back(n);
  std::sort(sizes.begin(), sizes.end());
  EXPECT_GE(sizes.front(), 1);
  EXPECT_GE(sizes.back(), 10 * sizes[50]) << "largest " << sizes.back() << " median " << sizes[50];
  EXPECT_EQ(SyntheticOwnerSizes(2000, 100)[0], sizes.back());

  SyntheticOptions plain = s;
  plain.owners = 0;
  std::vector<Repo> flat = GenerateSyntheticRepos(plain);
  EXPECT_EQ(flat[7].id, "synthetic/model-00007");
  for (size_t r = 0; r < repos.size(); r += 97) {
    EXPECT_EQ(repos[r].commits[1].time, flat[r].commits[1].time) << "dates do not depend on owners";
  }
  EXPECT_EQ(GenerateSyntheticRepos(s)[1234].id, repos[1234].id);
}

TEST(Churn, BackgroundReposInterleaveWithRealOnesAtTheirRate) {
  const int64_t t = *ParseIsoTime("2025-03-01T00:00:00.000Z");
  FakeHubOptions options;
  options.mode = Mode::kReplay;
  options.speed = 0;
  options.replay_start = t;
  options.churn_per_minute = 120;
  options.churn_repos = 500;
  options.churn_owners = 50;
  SyntheticOptions s;
  s.repos = 20;
  s.commits = 1;
  s.tensors_per_file = 0;
  s.first_date = FormatIsoTime(t - 610);  // repo r at t - 610 + 60 r: 11 visible at t
  auto state = MakeState(options, GenerateSyntheticRepos(s));
  const std::string q = "sort=lastModified&expand[]=sha&expand[]=lastModified";
  json all = List(*state, q);
  ASSERT_EQ(all.size(), 511u);
  int recent_churn = 0, real_seen = 0;
  bool churn_before_real = false, churn_after_real = false;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string id = all[i]["id"];
    const bool churn = std::regex_match(id, std::regex(R"(churn-owner-\d{3}/bg-model-\d{5})"));
    if (!churn) {
      EXPECT_TRUE(id.starts_with("synthetic/model-")) << id;
      ++real_seen;
    } else if (all[i]["lastModified"] > FormatIsoTime(t - 60)) {
      ++recent_churn;
    }
    if (churn && real_seen == 0) churn_before_real = true;
    if (churn && real_seen > 0 && real_seen < 11) churn_after_real = true;
    if (i > 0) {
      EXPECT_GE(all[i - 1]["lastModified"], all[i]["lastModified"]);
    }
    EXPECT_LE(all[i]["lastModified"], FormatIsoTime(t));
  }
  EXPECT_EQ(recent_churn, 120) << "120 a minute";
  EXPECT_TRUE(churn_before_real && churn_after_real) << "interleaved by lastModified";

  json owner = List(*state, "author=churn-owner-007&" + q);
  EXPECT_EQ(owner.size(), 10u);
  for (const json& item : owner)
    EXPECT_TRUE(item["id"].get<std::string>().starts_with("churn-owner-007/"));

  std::vector<std::string> walked;
  for (std::string next = "/api/models?" + q + "&limit=70"; !next.empty();) {
    FakeResponse page = Handle(*state, "GET", next);
    ASSERT_EQ(page.status, 200);
    for (const std::string& id : Ids(json::parse(page.body))) walked.push_back(id);
    next = NextPath(page);
  }
  EXPECT_EQ(walked, Ids(all)) << "paging across churn and real repos";
  EXPECT_EQ(List(*state, q).dump(), all.dump()) << "deterministic at a given time";

  state->AdvanceReplayClock(std::chrono::seconds(30));
  json later = List(*state, q);
  std::map<std::string, std::string> sha_before;
  for (const json& item : all) sha_before[item["id"]] = item["sha"];
  int moved = 0;
  for (size_t i = 0; i < later.size(); ++i) {
    if (sha_before[later[i]["id"]] != later[i]["sha"]) {
      ++moved;
      EXPECT_LT(i, 60u) << "the moved ones are on top";
    }
  }
  EXPECT_EQ(moved, 60);
  EXPECT_EQ(Handle(*state, "GET", "/api/models/churn-owner-007/bg-model-00007/refs").status, 401)
      << "listed only";
}

}  // namespace
}  // namespace hubwatch::fakehub
