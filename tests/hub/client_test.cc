// The Hub client against fakehub: every endpoint, pagination edges, redirects, ETag/304,
// safetensors headers.

#include "tracker/hub/client.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/fakehub/synthetic.h"
#include "tests/hub/hub_test_env.h"

namespace hubwatch::hub {
namespace {

constexpr char kF1[] = "meta-llama/Meta-Llama-3-8B-Instruct";
constexpr char kF1Head[] = "a8977699a3d0820e80129fb3c93c20fbd9972c41";
constexpr char kGemma2[] = "google/gemma-2-9b-it";

fakehub::FakeUser ApprovedUser() { return {"hf_test_approved_token", "tester", true}; }

class ClientTest : public HubTest {
 protected:
  void SetUp() override {
    fakehub::FakeHubOptions options;
    options.users = {ApprovedUser(), {"hf_test_unapproved", "stranger", false}};
    options.api_quota = 1'000'000;
    options.resolvers_quota = 1'000'000;
    for (auto [commits, files] : {std::pair{50, 0}, std::pair{51, 0}, std::pair{1, 47},
                                  std::pair{1, 48}, std::pair{1, 998}}) {
      fakehub::SyntheticOptions s;
      s.commits = commits;
      s.extra_files = files;
      s.tensors_per_file = 0;
      s.prefix = "edge/c" + std::to_string(commits) + "-f" + std::to_string(files) + "-";
      for (auto& repo : fakehub::GenerateSyntheticRepos(s))
        options.extra_repos.push_back(std::move(repo));
    }
    StartHub(std::move(options));
  }

  HubClient& AuthedClient(const std::string& token = ApprovedUser().token) {
    HubClientOptions options;
    options.settings.token = Secret(token);
    return MakeClient(std::move(options));
  }
};

TEST_F(ClientTest, RefsListMainAndItsCommit) {
  MakeClient();
  auto [refs, stats] = Await<RepoRefs>(io_, [&](auto cb) { client().Refs(kF1, false, cb); });
  ASSERT_TRUE(refs.ok()) << refs.error().ToString();
  ASSERT_EQ(refs->branches.size(), 1u);
  EXPECT_EQ(refs->branches[0].ref, "refs/heads/main");
  EXPECT_EQ(refs->branches[0].target_commit, kF1Head);
  EXPECT_EQ(stats.requests, 1);
  EXPECT_EQ(client().accounting().Requests(RequestKind::kRefs, 200), 1u);
}

TEST_F(ClientTest, CommitsNewestFirstWithTotalAndStopAt) {
  MakeClient();
  auto [all, stats] =
      Await<CommitList>(io_, [&](auto cb) { client().Commits(kF1, "main", {}, cb); });
  ASSERT_TRUE(all.ok()) << all.error().ToString();
  ASSERT_EQ(all->commits.size(), 5u);
  EXPECT_EQ(all->commits[0].id, kF1Head);
  EXPECT_EQ(all->commits[1].id, "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf");
  EXPECT_EQ(all->commits[4].title, "initial commit");
  EXPECT_EQ(all->commits[4].authors, std::vector<std::string>{"system"});
  EXPECT_EQ(all->total_count.value_or(0), 5u);

  CommitsOptions since;
  since.stop_at = "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf";
  auto [fresh, s2] =
      Await<CommitList>(io_, [&](auto cb) { client().Commits(kF1, "main", since, cb); });
  ASSERT_TRUE(fresh.ok());
  ASSERT_EQ(fresh->commits.size(), 1u);
  EXPECT_TRUE(fresh->reached_stop_commit);

  auto [at_tag, s3] = Await<CommitList>(io_, [&](auto cb) {
    client().Commits(kF1, "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf", {}, cb);
  });
  ASSERT_TRUE(at_tag.ok());
  EXPECT_EQ(at_tag->commits.size(), 4u) << "history of an older commit";
}

TEST_F(ClientTest, CommitPaginationAtExactly50And51) {
  MakeClient();
  auto [fifty, s50] = Await<CommitList>(
      io_, [&](auto cb) { client().Commits("edge/c50-f0-00000", "main", {}, cb); });
  ASSERT_TRUE(fifty.ok());
  EXPECT_EQ(fifty->commits.size(), 50u);
  EXPECT_EQ(fifty->pages, 1);
  EXPECT_EQ(s50.requests, 1);

  auto [fiftyone, s51] = Await<CommitList>(
      io_, [&](auto cb) { client().Commits("edge/c51-f0-00000", "main", {}, cb); });
  ASSERT_TRUE(fiftyone.ok());
  EXPECT_EQ(fiftyone->commits.size(), 51u);
  EXPECT_EQ(fiftyone->pages, 2);
  EXPECT_EQ(fiftyone->total_count.value_or(0), 51u);
  EXPECT_EQ(fiftyone->commits.back().title, "initial commit");
  std::set<std::string> ids;
  for (const auto& c : fiftyone->commits) ids.insert(c.id);
  EXPECT_EQ(ids.size(), 51u) << "no commit twice across pages";
  auto pages = Logged("/api/models/edge/c51-f0-00000/commits/main");
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(pages[1].query, "p=1&limit=50");
}

TEST_F(ClientTest, RelativeLinkTargetsAreResolvedAgainstTheRequest) {
  hub_->SetRelativeLinks(true);
  MakeClient();
  CommitsOptions small;
  small.page_size = 7;
  auto [list, stats] = Await<CommitList>(
      io_, [&](auto cb) { client().Commits("edge/c51-f0-00000", "main", small, cb); });
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(list->commits.size(), 51u);
  EXPECT_EQ(list->pages, 8);
}

TEST_F(ClientTest, TreePagesOf50WithExpandAndOf1000Without) {
  MakeClient();
  TreeOptions expanded;
  expanded.recursive = true;
  expanded.expand = true;
  // 2 root files + "extra" + 47 or 48 files = 50 or 51 entries.
  auto [t50, s50] = Await<std::vector<TreeEntry>>(
      io_, [&](auto cb) { client().Tree("edge/c1-f47-00000", "main", expanded, cb); });
  ASSERT_TRUE(t50.ok()) << t50.error().ToString();
  EXPECT_EQ(t50->size(), 50u);
  EXPECT_EQ(s50.requests, 1);
  auto [t51, s51] = Await<std::vector<TreeEntry>>(
      io_, [&](auto cb) { client().Tree("edge/c1-f48-00000", "main", expanded, cb); });
  ASSERT_TRUE(t51.ok());
  EXPECT_EQ(t51->size(), 51u);
  EXPECT_EQ(s51.requests, 2);
  for (const TreeEntry& e : *t51) EXPECT_TRUE(e.last_commit.has_value()) << e.path;

  TreeOptions plain;
  plain.recursive = true;
  auto [t1001, s1001] = Await<std::vector<TreeEntry>>(
      io_, [&](auto cb) { client().Tree("edge/c1-f998-00000", "main", plain, cb); });
  ASSERT_TRUE(t1001.ok());
  EXPECT_EQ(t1001->size(), 1001u);
  EXPECT_EQ(s1001.requests, 2);

  TreeOptions sub;
  sub.path = "extra";
  auto [extra, s] = Await<std::vector<TreeEntry>>(
      io_, [&](auto cb) { client().Tree("edge/c1-f47-00000", "main", sub, cb); });
  ASSERT_TRUE(extra.ok());
  EXPECT_EQ(extra->size(), 47u);
  EXPECT_TRUE(extra->front().path.starts_with("extra/"));
}

TEST_F(ClientTest, TreeShowsLfsIdentityAndDirectories) {
  MakeClient();
  auto [tree, stats] =
      Await<std::vector<TreeEntry>>(io_, [&](auto cb) { client().Tree(kGemma2, "main", {}, cb); });
  ASSERT_TRUE(tree.ok()) << tree.error().ToString();
  int shards = 0;
  for (const TreeEntry& e : *tree) {
    if (e.path.ends_with(".safetensors")) {
      ++shards;
      ASSERT_TRUE(e.lfs.has_value()) << e.path;
      EXPECT_EQ(e.lfs->oid.size(), 64u);
      EXPECT_EQ(e.lfs->size, e.size);
      EXPECT_GT(e.size, 3'000'000'000u);
      EXPECT_GT(e.lfs->pointer_size, 100u);
    }
    if (e.path == "config.json") {
      EXPECT_FALSE(e.lfs.has_value());
      EXPECT_EQ(e.oid.size(), 40u);
    }
  }
  EXPECT_EQ(shards, 4);
  TreeOptions missing;
  missing.path = "no/such/dir";
  auto [error, s] = Await<std::vector<TreeEntry>>(
      io_, [&](auto cb) { client().Tree(kGemma2, "main", missing, cb); });
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().kind, HubErrorKind::kEntryNotFound);
  EXPECT_EQ(error.error().http_status, 404);
}

TEST_F(ClientTest, ModelInfoFullExpandedAndWithBlobs) {
  MakeClient();
  auto [info, stats] =
      Await<ModelInfo>(io_, [&](auto cb) { client().GetModelInfo(kGemma2, {}, cb); });
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(info->id, kGemma2);
  EXPECT_EQ(info->gated, GatedMode::kManual) << "metadata is readable while gated";
  EXPECT_EQ(info->safetensors_total.value_or(0), 9'241'705'984u);
  EXPECT_EQ(info->safetensors_parameters.at("BF16"), 9'241'705'984u);
  EXPECT_EQ(info->sha.value_or("").size(), 40u);
  EXPECT_GE(info->siblings.size(), 10u);

  ModelInfoOptions only_sha;
  only_sha.revision = "main";
  only_sha.expand = {"sha", "lastModified"};
  auto [small, s2] =
      Await<ModelInfo>(io_, [&](auto cb) { client().GetModelInfo(kGemma2, only_sha, cb); });
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->sha, info->sha);
  EXPECT_FALSE(small->gated.has_value());
  EXPECT_TRUE(small->siblings.empty());
  EXPECT_TRUE(small->tags.empty());
  EXPECT_FALSE(small->likes.has_value());

  ModelInfoOptions blobs;
  blobs.blobs = true;
  auto [full, s3] =
      Await<ModelInfo>(io_, [&](auto cb) { client().GetModelInfo(kGemma2, blobs, cb); });
  ASSERT_TRUE(full.ok());
  bool saw_lfs = false;
  for (const Sibling& s : full->siblings) {
    if (s.rfilename == "model-00001-of-00004.safetensors") {
      ASSERT_TRUE(s.lfs.has_value());
      EXPECT_EQ(s.lfs->oid.size(), 64u);
      saw_lfs = true;
    }
  }
  EXPECT_TRUE(saw_lfs);

  ModelInfoOptions bad;
  bad.expand = {"not-a-field"};
  auto [rejected, s4] =
      Await<ModelInfo>(io_, [&](auto cb) { client().GetModelInfo(kGemma2, bad, cb); });
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().kind, HubErrorKind::kBadRequest);

  ModelInfoOptions old;
  old.revision = "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf";
  auto [at_old, s5] = Await<ModelInfo>(io_, [&](auto cb) { client().GetModelInfo(kF1, old, cb); });
  ASSERT_TRUE(at_old.ok());
  EXPECT_EQ(at_old->sha.value_or(""), "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf");
}

TEST_F(ClientTest, ListModelsFiltersSortsAndPages) {
  MakeClient();
  ListModelsOptions options;
  options.author = "meta-llama";
  options.page_size = 1;
  auto [models, stats] =
      Await<std::vector<ModelSummary>>(io_, [&](auto cb) { client().ListModels(options, cb); });
  ASSERT_TRUE(models.ok()) << models.error().ToString();
  ASSERT_EQ(models->size(), 3u);
  EXPECT_EQ(stats.requests, 3);
  EXPECT_EQ((*models)[0].id, "meta-llama/Llama-3.1-8B-Instruct") << "newest lastModified first";
  for (size_t i = 1; i < models->size(); ++i) {
    EXPECT_GE(*(*models)[i - 1].last_modified, *(*models)[i].last_modified);
  }
  // As on the Hub (reference §11, #2460): without expand[]=sha a listed item has no sha, and
  // lastModified only because the sort is lastModified.
  EXPECT_FALSE((*models)[2].sha.has_value());
  EXPECT_TRUE((*models)[2].last_modified.has_value());
}

TEST_F(ClientTest, AnApiBodyOverTheLimitIsRefusedUnread) {
  HubClientOptions options;
  options.max_api_body_bytes = 200;
  MakeClient(std::move(options));
  auto [info, stats] =
      Await<ModelInfo>(io_, [&](auto cb) { client().GetModelInfo(kGemma2, {}, cb); });
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().kind, HubErrorKind::kProtocol);
  EXPECT_NE(info.error().detail.find("over the limit of 200 bytes"), std::string::npos)
      << info.error().detail;
  EXPECT_EQ(stats.requests, 1) << "not retried";
  ListModelsOptions listing;
  listing.author = "meta-llama";
  auto [models, s2] =
      Await<std::vector<ModelSummary>>(io_, [&](auto cb) { client().ListModels(listing, cb); });
  ASSERT_FALSE(models.ok());
  EXPECT_NE(models.error().detail.find("over the limit of 200 bytes"), std::string::npos)
      << models.error().detail;
}

TEST_F(ClientTest, ResolveHeadOfAGitFileFollowsResolveCache) {
  MakeClient();
  auto [file, stats] = Await<ResolvedFile>(
      io_, [&](auto cb) { client().ResolveHead(kGemma2, "main", "config.json", cb); });
  ASSERT_FALSE(file.ok()) << "gated: anonymous HEAD is refused";
  EXPECT_EQ(file.error().kind, HubErrorKind::kGatedAnonymous);

  AuthedClient();
  auto [ok, s2] = Await<ResolvedFile>(
      io_, [&](auto cb) { client().ResolveHead(kGemma2, "main", "config.json", cb); });
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok->commit.size(), 40u);
  EXPECT_EQ(ok->etag.size(), 40u) << "git blob sha1, quotes stripped";
  EXPECT_FALSE(ok->is_lfs);
  EXPECT_EQ(s2.requests, 2) << "307 to /api/resolve-cache, then 200";
  EXPECT_EQ(s2.redirects, 1);
  auto cache_hops = Logged("/api/resolve-cache/");
  ASSERT_EQ(cache_hops.size(), 1u);
  EXPECT_TRUE(cache_hops[0].authorization) << "same-host hop keeps the token";
  EXPECT_EQ(cache_hops[0].method, "HEAD");
}

TEST_F(ClientTest, ResolveHeadOfAnLfsFileStopsAtTheCdnRedirect) {
  AuthedClient();
  auto [file, stats] = Await<ResolvedFile>(io_, [&](auto cb) {
    client().ResolveHead(kGemma2, "main", "model-00002-of-00004.safetensors", cb);
  });
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  EXPECT_TRUE(file->is_lfs);
  EXPECT_EQ(file->final_status, 302);
  EXPECT_EQ(file->etag.size(), 64u) << "X-Linked-Etag is the sha256";
  EXPECT_GT(file->size.value_or(0), 4'000'000'000u);
  EXPECT_TRUE(file->location.starts_with(hub_->cdn_endpoint())) << file->location;
  EXPECT_EQ(stats.requests, 1);
  for (const auto& r : hub_->RequestLog())
    EXPECT_NE(r.server, "cdn") << "HEAD never goes to the CDN";
}

TEST_F(ClientTest, ResolveGetDropsTheTokenAtTheCdn) {
  AuthedClient();
  auto [content, stats] = Await<FileContent>(io_, [&](auto cb) {
    client().ResolveGet("mistralai/Mistral-7B-Instruct-v0.3", "main", "tokenizer.model", cb);
  });
  ASSERT_TRUE(content.ok()) << content.error().ToString();
  EXPECT_EQ(content->body.size(), 587404u);
  EXPECT_TRUE(content->file.is_lfs);
  bool saw_cdn = false;
  for (const auto& r : hub_->RequestLog()) {
    if (r.server == "cdn") {
      saw_cdn = true;
      EXPECT_FALSE(r.authorization) << "token sent to " << r.path;
    } else {
      EXPECT_TRUE(r.authorization) << "token missing on the Hub hop " << r.path;
    }
  }
  EXPECT_TRUE(saw_cdn);
}

TEST_F(ClientTest, RenamedRepoRedirectsAreFollowedWithTheToken) {
  AuthedClient();
  auto [file, stats] = Await<ResolvedFile>(io_, [&](auto cb) {
    client().ResolveHead("meta-llama/Meta-Llama-3.1-8B-Instruct", "main", "config.json", cb);
  });
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  EXPECT_EQ(file->commit, "8c22764a7e3675c50d4c7c9a4edb474456022b16");
  EXPECT_EQ(stats.requests, 3) << "rename 307, resolve 307, resolve-cache 200";
  for (const auto& r : hub_->RequestLog()) EXPECT_TRUE(r.authorization) << r.path;

  auto [refs, s2] = Await<RepoRefs>(
      io_, [&](auto cb) { client().Refs("meta-llama/Meta-Llama-3.1-8B-Instruct", false, cb); });
  ASSERT_TRUE(refs.ok());
  EXPECT_EQ(refs->branches[0].target_commit, "8c22764a7e3675c50d4c7c9a4edb474456022b16");
}

TEST_F(ClientTest, SecondResolveGetIsAnsweredFrom304) {
  AuthedClient();
  auto get = [&] {
    return Await<FileContent>(io_, [&](auto cb) {
      client().ResolveGet("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "main",
                          "tokenizer_config.json", cb);
    });
  };
  auto [first, s1] = get();
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_FALSE(first->from_cache);
  EXPECT_NE(first->body.find("<think>"), std::string::npos) << "F7: the newest template";
  auto [second, s2] = get();
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->body, first->body);
  EXPECT_EQ(second->file.commit, first->file.commit);
  EXPECT_EQ(s2.requests, 1) << "one cheap request for an unchanged file";
  EXPECT_EQ(s2.not_modified, 1);
  auto resolves = Logged("/resolve/main/tokenizer_config.json");
  ASSERT_EQ(resolves.size(), 2u);
  EXPECT_EQ(resolves[1].status, 304);
  EXPECT_FALSE(resolves[1].if_none_match.empty());
}

TEST_F(ClientTest, RepeatedApiGetIsA304) {
  MakeClient();
  for (int i = 0; i < 2; ++i) {
    auto [refs, stats] = Await<RepoRefs>(io_, [&](auto cb) { client().Refs(kF1, false, cb); });
    ASSERT_TRUE(refs.ok());
    EXPECT_EQ(refs->branches[0].target_commit, kF1Head);
    EXPECT_EQ(stats.not_modified, i);
  }
  auto logged = Logged("/refs");
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_EQ(logged[1].status, 304);
  EXPECT_EQ(logged[1].bytes, 0u);
}

TEST_F(ClientTest, SafetensorsHeadersOfGemmaShardsCarryTheRealTensors) {
  AuthedClient();
  size_t tensors = 0;
  uint64_t parameters = 0;
  for (int shard = 1; shard <= 4; ++shard) {
    const std::string path = "model-0000" + std::to_string(shard) + "-of-00004.safetensors";
    auto [info, stats] = Await<SafetensorsHeaderInfo>(
        io_, [&](auto cb) { client().ReadSafetensorsHeader(kGemma2, "main", path, cb); });
    ASSERT_TRUE(info.ok()) << path << ": " << info.error().ToString();
    EXPECT_EQ(info->range_reads, 1);
    EXPECT_EQ(info->header.data_size + 8 + info->header_length, info->file_size);
    EXPECT_TRUE(info->file.is_lfs);
    EXPECT_EQ(info->header.metadata.at("format"), "pt");
    EXPECT_LT(stats.bytes_received, 120'000u) << "only the head of a multi-GB file";
    tensors += info->header.tensors.size();
    for (const auto& [name, t] : info->header.tensors) {
      EXPECT_EQ(t.dtype, "BF16");
      parameters += t.elements;
    }
    if (shard == 1) {
      const auto& embed = info->header.tensors.at("model.embed_tokens.weight");
      EXPECT_EQ(embed.shape, (std::vector<int64_t>{256000, 3584}));
    }
    if (shard == 4) {
      EXPECT_EQ(info->header.tensors.at("model.layers.41.mlp.down_proj.weight").shape,
                (std::vector<int64_t>{3584, 14336}));
      EXPECT_EQ(info->header.tensors.count("lm_head.weight"), 0u) << "tied embeddings";
    }
  }
  EXPECT_EQ(tensors, 1u + 42u * 11u + 1u);
  EXPECT_EQ(parameters, 9'241'705'984u);
  for (const auto& r : hub_->RequestLog()) {
    if (r.server == "cdn") {
      EXPECT_FALSE(r.authorization);
      EXPECT_EQ(r.range, "bytes=0-100000");
    }
  }
}

TEST_F(ClientTest, LongSafetensorsHeaderTakesASecondRangeRead) {
  fakehub::SyntheticOptions big;
  big.tensors_per_file = 2500;  // ~200 KB of header
  big.prefix = "big/header-";
  fakehub::FakeHubOptions options;
  options.extra_repos = fakehub::GenerateSyntheticRepos(big);
  hub_.reset();
  StartHub(std::move(options), /*with_fixtures=*/false);
  MakeClient();
  auto [info, stats] = Await<SafetensorsHeaderInfo>(io_, [&](auto cb) {
    client().ReadSafetensorsHeader("big/header-00000", "main", "model.safetensors", cb);
  });
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_GT(info->header_length, 100'000u);
  EXPECT_EQ(info->range_reads, 2);
  EXPECT_EQ(info->header.tensors.size(), 2500u);
  auto cdn = std::vector<fakehub::LoggedRequest>();
  for (const auto& r : hub_->RequestLog()) {
    if (r.server == "cdn") cdn.push_back(r);
  }
  ASSERT_EQ(cdn.size(), 2u);
  EXPECT_EQ(cdn[1].range, "bytes=100001-" + std::to_string(info->header_length + 7));
}

TEST_F(ClientTest, F8WeightsRefreshChangesSha256ButNotShapes) {
  MakeClient();
  auto [commits, s] = Await<CommitList>(
      io_, [&](auto cb) { client().Commits("microsoft/Phi-3-mini-4k-instruct", "main", {}, cb); });
  ASSERT_TRUE(commits.ok());
  ASSERT_EQ(commits->commits.size(), 3u);
  const std::string before = commits->commits[1].id, after = commits->commits[0].id;
  std::vector<SafetensorsHeaderInfo> reads;
  for (const std::string& rev : {before, after}) {
    auto [info, stats] = Await<SafetensorsHeaderInfo>(io_, [&](auto cb) {
      client().ReadSafetensorsHeader("microsoft/Phi-3-mini-4k-instruct", rev,
                                     "model-00001-of-00002.safetensors", cb);
    });
    ASSERT_TRUE(info.ok()) << info.error().ToString();
    EXPECT_EQ(info->file.commit, rev);
    reads.push_back(std::move(info).value());
  }
  EXPECT_NE(reads[0].file.etag, reads[1].file.etag);
  EXPECT_EQ(reads[0].header.tensors.size(), reads[1].header.tensors.size());
  for (const auto& [name, t] : reads[0].header.tensors) {
    EXPECT_EQ(t.shape, reads[1].header.tensors.at(name).shape) << name;
  }
}

}  // namespace
}  // namespace hubwatch::hub
