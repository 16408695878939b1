// The files engine: added, removed, renamed; and the file roles it reports.

#include "tracker/diff/files_diff.h"

#include <gtest/gtest.h>

#include "tracker/diff/tracked_files.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

ManifestEntry File(const std::string& path, const std::string& oid, uint64_t size = 10) {
  return {path, oid, size, std::nullopt, std::nullopt};
}

TEST(FilesDiff, NoChangeNoneReported) {
  const Manifest m = {File("README.md", "r"), File("config.json", "c")};
  EXPECT_TRUE(DiffFiles(m, m).empty());
  // Content edits of files other engines read are theirs to report.
  EXPECT_TRUE(DiffFiles(m, {File("README.md", "r2"), File("config.json", "c2")}).empty());
}

TEST(FilesDiff, AddedFilesAreCosmetic) {
  const std::vector<Change> changes = DiffFiles(
      {File("config.json", "c")},
      {File("config.json", "c"), File("README.md", "r"), File("chat_template.jinja", "j")});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kFiles);
  EXPECT_EQ(changes[0].impact, Impact::kCosmetic);
  EXPECT_EQ(changes[0].summary, "added: README.md, chat_template.jinja [chat_template]");
  EXPECT_EQ(changes[0].details["added"][1],
            json({{"path", "chat_template.jinja"}, {"size", 10}, {"role", "chat_template"}}));
}

TEST(FilesDiff, RemovingAFileAnEngineReadsIsBehavioral) {
  const std::vector<Change> changes =
      DiffFiles({File("tokenizer.json", "t"), File("README.md", "r"), File(".gitattributes", "g")},
                {File("README.md", "r")});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].summary, "removed: .gitattributes, tokenizer.json [tokenizer]");
  EXPECT_EQ(changes[0].details["affects"], json({"tokenizer"}));
}

TEST(FilesDiff, RenamesBySameContent) {
  ManifestEntry old_weights = {"pytorch_model.bin", "p1", 5000, "sha-w", 5000};
  ManifestEntry new_weights = {"weights/pytorch_model.bin", "p1", 5000, "sha-w", 5000};
  const std::vector<Change> changes =
      DiffFiles({old_weights, File("notes.txt", "n"), File("empty-a", "e69de", 0)},
                {new_weights, File("docs/notes.txt", "n"), File("empty-b", "e69de", 0)});
  ASSERT_EQ(changes.size(), 1u);
  const json& renamed = changes[0].details["renamed"];
  ASSERT_EQ(renamed.size(), 2u);
  EXPECT_EQ(renamed[0], json({{"from", "notes.txt"}, {"to", "docs/notes.txt"}, {"role", "none"}}));
  EXPECT_EQ(renamed[1]["from"], "pytorch_model.bin");
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);  // the weights moved
  // Empty files are not renames of each other.
  EXPECT_EQ(changes[0].details["added"][0]["path"], "empty-b");
  EXPECT_EQ(changes[0].details["removed"][0]["path"], "empty-a");
  EXPECT_EQ(changes[0].summary,
            "removed: empty-a; renamed: notes.txt -> docs/notes.txt, pytorch_model.bin -> "
            "weights/pytorch_model.bin [weights]; added: empty-b");
}

TEST(FilesDiff, RemoteCodeModifiedIsBehavioral) {
  const std::vector<Change> changes =
      DiffFiles({File("modeling_phi3.py", "a")}, {File("modeling_phi3.py", "b")});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].summary, "remote code modified: modeling_phi3.py");
  EXPECT_EQ(changes[0].details["affects"], json({"remote_code"}));
}

TEST(FilesDiff, LongListsAreCut) {
  Manifest after;
  for (int i = 0; i < 10; ++i) {
    after.push_back(File("f" + std::to_string(i), "x" + std::to_string(i)));
  }
  EXPECT_EQ(DiffFiles({}, after)[0].summary, "added: f0, f1, f2 (+7 more)");
  EXPECT_EQ(DiffFiles({}, after)[0].details["added"].size(), 10u);
}

TEST(TrackedFiles, Roles) {
  EXPECT_EQ(RoleOfPath("config.json"), FileRole::kConfig);
  EXPECT_EQ(RoleOfPath("text_encoder/config.json"), FileRole::kNone);
  EXPECT_EQ(RoleOfPath("generation_config.json"), FileRole::kGenerationConfig);
  EXPECT_EQ(RoleOfPath("tokenizer_config.json"), FileRole::kTokenizer);
  EXPECT_EQ(RoleOfPath("added_tokens.json"), FileRole::kTokenizer);
  EXPECT_EQ(RoleOfPath("chat_template.json"), FileRole::kChatTemplate);
  EXPECT_EQ(RoleOfPath("model-00001-of-00004.safetensors"), FileRole::kWeights);
  EXPECT_EQ(RoleOfPath("unet/diffusion_pytorch_model.safetensors"), FileRole::kWeights);
  EXPECT_EQ(RoleOfPath("pytorch_model.bin"), FileRole::kWeights);
  EXPECT_EQ(RoleOfPath("training_args.bin"), FileRole::kNone);
  EXPECT_EQ(RoleOfPath("model.safetensors.index.json"), FileRole::kWeightsIndex);
  EXPECT_EQ(RoleOfPath("preprocessor_config.json"), FileRole::kProcessor);
  EXPECT_EQ(RoleOfPath("modeling_phi3.py"), FileRole::kRemoteCode);
  EXPECT_EQ(RoleOfPath("README.md"), FileRole::kNone);
  EXPECT_EQ(FileRoleName(FileRole::kWeightsIndex), "weights_index");
}

}  // namespace
}  // namespace hubwatch::diff
