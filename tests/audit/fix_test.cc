// --fix on trees scanned here: only the places where the scan found each affected pin's
// revision written change (never another occurrence of the same text), and a file is reached
// from its scan root without following a symbolic link, even one swapped in after the scan.

#include "daemon/audit/fix.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "daemon/audit/scan_tree.h"

namespace hubwatch::audit {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kNew = "2222222222222222222222222222222222222222";

class FixTest : public ::testing::Test {
 protected:
  // A directory per test: ctest runs the tests of one fixture in parallel processes.
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("hubwatch_audit_fix_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    tree_ = dir_ / "tree";
    fs::create_directories(tree_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void WriteFile(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  void Write(const std::string& relative, const std::string& text) {
    WriteFile(tree_ / relative, text);
  }
  static std::string ReadFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string Read(const std::string& relative) { return ReadFile(tree_ / relative); }

  // Scans `roots` and judges every reference as pinned to a revision an advisory affects, with
  // `newest` the revision that takes every fix.
  static std::vector<Finding> Affected(const std::vector<std::string>& roots,
                                       const std::string& newest = kNew) {
    Result<ScanReport> scan = ScanTree(roots, ScanOptions());
    EXPECT_TRUE(scan.ok());
    if (!scan.ok()) return {};
    std::vector<Evidence> evidence;
    for (const ModelReference& r : scan->references) {
      Evidence e{.tracked = true, .newest = newest, .sha = r.revision};
      e.advisories = {{.id = "A", .kind = "config", .impact = diff::Impact::kBehavioral}};
      evidence.push_back(std::move(e));
    }
    return Judge(scan->references, evidence, "");
  }

  // The names in `dir` that --fix's temporaries have.
  static std::vector<std::string> Temporaries(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().filename().string().rfind(".hubwatch-tmp-", 0) == 0) {
        out.push_back(e.path().filename().string());
      }
    }
    return out;
  }

  fs::path dir_;
  fs::path tree_;
};

TEST_F(FixTest, ADigitsOnlyShortShaChangesOnlyWhereItPins) {
  // 1234567 pins the model, and is also a number on the same line and on the next.
  Write("models.hfpins", "org/name@1234567  # 1234567\n# build 1234567\n");
  Write("train.py",
        "retries = 1234567; m = AutoModelForCausalLM.from_pretrained(\"org/name\", "
        "revision=\"1234567\")\ntimeout = 1234567\n");
  Write("config.yaml",
        "model_name_or_path: org/name\nrevision: \"1234567\"  # 1234567\n"
        "steps: 1234567\n");
  Write("fetch.sh",
        "N=1234567 huggingface-cli download org/name --revision 1234567\n"
        "echo 1234567\n");
  const std::vector<Finding> findings = Affected({tree_.string()});
  ASSERT_EQ(findings.size(), 4u);
  const std::vector<FileFix> fixes = ApplyFixes({tree_.string()}, findings);
  ASSERT_EQ(fixes.size(), 4u);
  for (const FileFix& f : fixes) {
    EXPECT_EQ(f.error, "") << f.file;
    EXPECT_EQ(f.replaced, 1) << f.file;
  }
  EXPECT_EQ(Read("models.hfpins"), "org/name@" + kNew + "  # 1234567\n# build 1234567\n");
  EXPECT_EQ(Read("train.py"),
            "retries = 1234567; m = AutoModelForCausalLM.from_pretrained(\"org/name\", "
            "revision=\"" +
                kNew + "\")\ntimeout = 1234567\n");
  EXPECT_EQ(Read("config.yaml"), "model_name_or_path: org/name\nrevision: \"" + kNew +
                                     "\"  # 1234567\nsteps: 1234567\n");
  EXPECT_EQ(Read("fetch.sh"),
            "N=1234567 huggingface-cli download org/name --revision " + kNew + "\necho 1234567\n");
}

// Each reader records where it read the revision: after the fix, every file is its old text
// with exactly the one literal replaced, and a second scan reads the new revision everywhere.
TEST_F(FixTest, EveryReaderRecordsWhereItsRevisionIsWritten) {
  const std::string o = "abcdef1";  // the old short sha, in every file also outside the pin
  const std::map<std::string, std::pair<std::string, std::string>> files = {
      // name -> (text before the literal, text after it)
      {"a.json",
       {"{\"id\": \"" + o + "\", \"model_name_or_path\": \"org/m\", \"revision\": \"", "\"}\n"}},
      {"b.toml", {"note = \"" + o + "\"\nmodel = \"org/m\"\nrevision = \"", "\"\n"}},
      {"c.yaml", {"# " + o + "\nmodel_name_or_path:\n  org/m\nrevision:\n  '", "'\n"}},
      {"d.yaml",
       {"args: [\"--model\", \"org/m\", \"--tag\", \"" + o + "\", \"--revision=", "\"]\n"}},
      {"e.yaml", {"args:\n  - --model\n  - org/m\n  - --revision\n  - \"", "\"  # " + o + "\n"}},
      {"Dockerfile", {"ENV TAG=" + o + "\nENV REV=", "\nRUN hf download org/m --revision $REV\n"}},
      {"f.sh", {"echo " + o + "\nvllm serve org/m --revision \"${REV:-", "}\"\n"}},
      {"g.sh",
       {"lm_eval --model hf --model_args pretrained=org/m,revision=",
        ",dtype=bf16 --tasks " + o + "\n"}},
      {"h.py",
       {"p.add_argument('--tag', default='" + o + "')\np.add_argument('--revision', default='",
        "')\nm = AutoModel.from_pretrained('org/m', revision=args.revision)\n"}},
      {"i.py",
       {"def load(rev):\n    return AutoModel.from_pretrained('org/m', revision=rev)\n"
        "print('" +
            o + "')\nload('",
        "')\n"}},
  };
  for (const auto& [name, text] : files) Write(name, text.first + o + text.second);
  const std::vector<Finding> findings = Affected({tree_.string()});
  std::map<std::string, int> pinned;
  for (const Finding& f : findings) pinned[f.reference.file] += f.reference.revision == o;
  for (const auto& [name, text] : files) EXPECT_EQ(pinned[name], 1) << name;
  const std::vector<FileFix> fixes = ApplyFixes({tree_.string()}, findings);
  for (const FileFix& f : fixes) {
    EXPECT_EQ(f.error, "") << f.file;
    EXPECT_EQ(f.replaced, 1) << f.file;
  }
  for (const auto& [name, text] : files) {
    EXPECT_EQ(Read(name), text.first + kNew + text.second) << name;
  }
  Result<ScanReport> again = ScanTree({tree_.string()}, ScanOptions());
  ASSERT_TRUE(again.ok());
  for (const ModelReference& r : again->references) {
    if (r.repo_id == "org/m") {
      EXPECT_EQ(r.revision, kNew) << r.file;
    }
  }
}

TEST_F(FixTest, APinHeldInAVariableIsFixedWhereItIsAssignedAndTheModeIsKept) {
  const std::string old = "1111111111111111111111111111111111111111";
  Write("train.py", "REV = \"" + old +
                        "\"\nm = AutoModel.from_pretrained(\"org/model\", "
                        "revision=REV)\nprint(\"" +
                        old + "\")\n");
  Write("serve.sh", "REV=\"" + old + "\"\nhf download org/model --revision \"$REV\"\n");
  // Every call passes the same literal: each call's is the pin.
  const std::string calls =
      "def load(rev):\n    return AutoModel.from_pretrained('org/model', revision=rev)\n";
  Write("calls.py", calls + "load('" + old + "')\nload('" + old + "')\n");
  Write("floating.py", "m = AutoModel.from_pretrained(\"org/model\")\n");
  ASSERT_EQ(::chmod((tree_ / "train.py").c_str(), 0751), 0);
  const std::vector<FileFix> fixes = ApplyFixes({tree_.string()}, Affected({tree_.string()}));
  ASSERT_EQ(fixes.size(), 3u);  // the floating reference is never rewritten
  for (const FileFix& f : fixes) {
    EXPECT_EQ(f.error, "") << f.file;
    EXPECT_EQ(f.replaced, f.file == "calls.py" ? 2 : 1) << f.file;
  }
  EXPECT_EQ(Read("calls.py"), calls + "load('" + kNew + "')\nload('" + kNew + "')\n");
  EXPECT_EQ(Read("train.py"), "REV = \"" + kNew +
                                  "\"\nm = AutoModel.from_pretrained(\"org/model\", "
                                  "revision=REV)\nprint(\"" +
                                  old + "\")\n");
  EXPECT_EQ(Read("serve.sh"), "REV=\"" + kNew + "\"\nhf download org/model --revision \"$REV\"\n");
  EXPECT_EQ(Read("floating.py"), "m = AutoModel.from_pretrained(\"org/model\")\n");
  EXPECT_EQ(fs::status(tree_ / "train.py").permissions() & fs::perms::all,
            static_cast<fs::perms>(0751));
  EXPECT_THAT(Temporaries(tree_), IsEmpty());
}

TEST_F(FixTest, ADirectorySwappedForALinkAfterTheScanIsNotWrittenThrough) {
  const std::string pins = "org/name@1234567\n";
  Write("deploy/models.hfpins", pins);
  const std::vector<Finding> findings = Affected({tree_.string()});
  ASSERT_EQ(findings.size(), 1u);
  // Between the scan and the fix, deploy/ becomes a link to a directory outside the tree.
  const fs::path outside = dir_ / "outside";
  WriteFile(outside / "models.hfpins", pins);
  fs::rename(tree_ / "deploy", dir_ / "moved");
  fs::create_directory_symlink(outside, tree_ / "deploy");
  const std::vector<FileFix> fixes = ApplyFixes({tree_.string()}, findings);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].file, "deploy/models.hfpins");
  EXPECT_EQ(fixes[0].replaced, 0);
  EXPECT_THAT(fixes[0].error, HasSubstr("deploy is a symbolic link, not followed"));
  EXPECT_EQ(ReadFile(outside / "models.hfpins"), pins);
  EXPECT_THAT(Temporaries(outside), IsEmpty());
}

TEST_F(FixTest, ALinkSwappedInForTheFileIsNotWrittenThrough) {
  const std::string pins = "org/name@1234567\n";
  Write("models.hfpins", pins);
  const std::vector<Finding> findings = Affected({tree_.string()});
  const fs::path victim = dir_ / "victim.hfpins";
  WriteFile(victim, pins);
  fs::remove(tree_ / "models.hfpins");
  fs::create_symlink(victim, tree_ / "models.hfpins");
  const std::vector<FileFix> fixes = ApplyFixes({tree_.string()}, findings);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_THAT(fixes[0].error, HasSubstr("a symbolic link, not followed"));
  EXPECT_EQ(ReadFile(victim), pins);
  EXPECT_TRUE(fs::is_symlink(tree_ / "models.hfpins"));
}

TEST_F(FixTest, AFileWhosePinMovedSinceTheScanIsLeftAsItIs) {
  Write("models.hfpins", "org/name@1234567\n");
  const std::vector<Finding> findings = Affected({tree_.string()});
  const std::string edited = "# a comment added\norg/name@1234567\n";
  Write("models.hfpins", edited);
  const std::vector<FileFix> fixes = ApplyFixes({tree_.string()}, findings);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].replaced, 0);
  EXPECT_THAT(fixes[0].error, HasSubstr("line 1 no longer holds 1234567"));
  EXPECT_EQ(Read("models.hfpins"), edited);
}

TEST_F(FixTest, FilesAreFoundUnderEachRootAndAsRootsThemselves) {
  Write("a/models.hfpins", "org/name@1234567\n");
  Write("b/models.hfpins", "org/other@abcdef1\n");
  const std::vector<std::string> roots = {(tree_ / "a").string() + "/", (tree_ / "b").string()};
  const std::vector<FileFix> fixes = ApplyFixes(roots, Affected(roots));
  ASSERT_EQ(fixes.size(), 2u);
  for (const FileFix& f : fixes) EXPECT_EQ(f.error, "") << f.file;
  EXPECT_EQ(Read("a/models.hfpins"), "org/name@" + kNew + "\n");
  EXPECT_EQ(Read("b/models.hfpins"), "org/other@" + kNew + "\n");
  Write("c.hfpins", "org/third@7654321\n");
  const std::vector<std::string> file_root = {(tree_ / "c.hfpins").string()};
  const std::vector<FileFix> single = ApplyFixes(file_root, Affected(file_root));
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].error, "");
  EXPECT_EQ(Read("c.hfpins"), "org/third@" + kNew + "\n");
}

TEST_F(FixTest, ASuggestedRevisionThatIsNotACommitIdIsNeverWritten) {
  const std::string pins = "org/name@1234567\n";
  Write("models.hfpins", pins);
  const std::vector<FileFix> fixes =
      ApplyFixes({tree_.string()}, Affected({tree_.string()}, "main\nevil/model@x"));
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].error, "the suggested revision is not a commit id");
  EXPECT_EQ(Read("models.hfpins"), pins);
}

TEST_F(FixTest, AReferenceWhoseRevisionHasNoOnePlaceLeavesTheFileAsItIs) {
  const std::string old = "1111111111111111111111111111111111111111";
  const std::string text = "m = AutoModel.from_pretrained(\"org/model\", revision=\"" +
                           old.substr(0, 20) + "\" \"" + old.substr(20) + "\")\n";
  Write("split.py", text);
  const std::vector<Finding> findings = Affected({tree_.string()});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].reference.revision, old);  // concatenated: no one place holds it
  const std::vector<FileFix> fixes = ApplyFixes({tree_.string()}, findings);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].replaced, 0);
  EXPECT_THAT(fixes[0].error, HasSubstr("no revision literal found to rewrite (line 1"));
  EXPECT_EQ(Read("split.py"), text);
}

}  // namespace
}  // namespace hubwatch::audit
