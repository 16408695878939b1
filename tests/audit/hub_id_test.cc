#include "daemon/audit/hub_id.h"

#include <gtest/gtest.h>

#include <string>

namespace hubwatch::audit {
namespace {

TEST(HubId, OrgNameIsAnIdEverywhere) {
  for (const char* id : {"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-0.5B", "a/b",
                         "google/gemma-3n-E2B-it", "user_1/model.v2"}) {
    EXPECT_TRUE(IsHubRepoId(id, IdContext::kModelOnly)) << id;
    EXPECT_TRUE(IsHubRepoId(id, IdContext::kOrgNameOnly)) << id;
  }
}

TEST(HubId, BareNamesOnlyWhereTheContextTakesOnlyModels) {
  EXPECT_TRUE(IsHubRepoId("gpt2", IdContext::kModelOnly));
  EXPECT_TRUE(IsHubRepoId("bert-base-uncased", IdContext::kModelOnly));
  EXPECT_FALSE(IsHubRepoId("gpt2", IdContext::kOrgNameOnly));
}

TEST(HubId, RejectsWhatTheHubRejects) {
  for (const char* bad : {"", "/", "a/", "/b", "a/b/c", "-a/b", "a/b-", "a--b/c", "a/b..c", "a b/c",
                          "org/na\xffme", "https://huggingface.co/gpt2", "a/b:main", ".hidden/x"}) {
    EXPECT_FALSE(IsHubRepoId(bad, IdContext::kModelOnly)) << bad;
  }
  EXPECT_FALSE(IsHubRepoId(std::string(97, 'a'), IdContext::kModelOnly));
  EXPECT_TRUE(IsHubRepoId(std::string(96, 'a'), IdContext::kModelOnly));
}

TEST(HubId, FileNamesAreNotConfigIds) {
  EXPECT_FALSE(IsHubRepoId("configs/llama.yaml", IdContext::kOrgNameOnly));
  EXPECT_FALSE(IsHubRepoId("data/train.jsonl", IdContext::kOrgNameOnly));
  EXPECT_TRUE(IsHubRepoId("TheBloke/Llama-2-7B-GGUF", IdContext::kOrgNameOnly));
}

TEST(HubId, LocalPaths) {
  for (const char* path :
       {"./out", "/models/x", "../ckpt", "~/m", "C:\\m", "out/run/1", "out/", "$HOME/m"}) {
    EXPECT_TRUE(LooksLikeLocalPath(path)) << path;
  }
  EXPECT_FALSE(LooksLikeLocalPath("org/name"));
  EXPECT_FALSE(LooksLikeLocalPath("gpt2"));
}

TEST(HubId, RevisionKinds) {
  EXPECT_EQ(ClassifyRevision(""), RevisionKind::kFloating);
  EXPECT_EQ(ClassifyRevision("0123456789abcdef0123456789abcdef01234567"), RevisionKind::kFullSha);
  EXPECT_EQ(ClassifyRevision("0123abc"), RevisionKind::kShortSha);
  EXPECT_EQ(ClassifyRevision("0123ab"), RevisionKind::kName);  // too short for a sha
  EXPECT_EQ(ClassifyRevision("main"), RevisionKind::kName);
  EXPECT_EQ(ClassifyRevision("v1.0"), RevisionKind::kName);
  EXPECT_EQ(ClassifyRevision("0123456789abcdef0123456789abcdef012345678"), RevisionKind::kName);
  EXPECT_EQ(RevisionKindName(RevisionKind::kShortSha), "short-sha");
}

TEST(HubId, RevisionSyntax) {
  EXPECT_TRUE(IsRevisionSyntax("refs/pr/1"));
  EXPECT_TRUE(IsRevisionSyntax("v1.0+build"));
  EXPECT_FALSE(IsRevisionSyntax(""));
  EXPECT_FALSE(IsRevisionSyntax("-rf"));
  EXPECT_FALSE(IsRevisionSyntax("main branch"));
  EXPECT_FALSE(IsRevisionSyntax("m\x1b[31m"));
  EXPECT_FALSE(IsRevisionSyntax(std::string(256, 'a')));
}

}  // namespace
}  // namespace hubwatch::audit
