#include "daemon/audit/scan_tree.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace hubwatch::audit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
namespace fs = std::filesystem;

class ScanTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "audit-scan-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(root_, ec)) {
      chmod(e.path().c_str(), 0700);  // so the chmod 000 cases can be removed
    }
    fs::remove_all(root_, ec);
  }
  void Write(const std::string& relative, const std::string& text) {
    fs::path p = fs::path(root_) / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  ScanReport Scan(const ScanOptions& options = {}) {
    Result<ScanReport> r = ScanTree({root_}, options);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? std::move(r).value() : ScanReport{};
  }
  static std::vector<std::string> Files(const ScanReport& r) {
    std::vector<std::string> out;
    for (const ModelReference& ref : r.references) out.push_back(ref.file + " " + ref.repo_id);
    return out;
  }
  static std::string Problem(const ScanReport& r, const std::string& path) {
    for (const ScanProblem& p : r.problems) {
      if (p.path == path) return p.message;
    }
    return "";
  }
  std::string root_;
};

TEST_F(ScanTreeTest, FindsReferencesAcrossLanguagesSortedWithRelativePaths) {
  Write("train.py", "m = AutoModel.from_pretrained('org/py')\n");
  Write("configs/sft.yaml", "base_model: org/yaml\n");
  Write("scripts/serve.sh", "vllm serve org/sh\n");
  Write("Dockerfile", "RUN hf download org/docker\n");
  Write("README.md", "from_pretrained('org/markdown-is-not-read')\n");
  Write("models.txt", "org/pin@v1\n");
  ScanReport r = Scan();
  EXPECT_THAT(Files(r),
              ElementsAre("Dockerfile org/docker", "configs/sft.yaml org/yaml",
                          "models.txt org/pin", "scripts/serve.sh org/sh", "train.py org/py"));
  EXPECT_EQ(r.files_scanned, 5);
  EXPECT_EQ(r.files_skipped, 1);  // README.md
  EXPECT_THAT(r.problems, IsEmpty());
}

TEST_F(ScanTreeTest, HonoursGitignoreAndAlwaysSkippedDirectories) {
  Write(".gitignore", "*.log.py\nbuild/\n/top_only.py\n!keep.log.py\n");
  Write("a.log.py", "AutoModel.from_pretrained('org/ignored-ext')\n");
  Write("keep.log.py", "AutoModel.from_pretrained('org/negated')\n");
  Write("build/x.py", "AutoModel.from_pretrained('org/ignored-dir')\n");
  Write("top_only.py", "AutoModel.from_pretrained('org/ignored-anchored')\n");
  Write("sub/top_only.py", "AutoModel.from_pretrained('org/not-anchored-here')\n");
  Write("sub/.gitignore", "local.py\n");
  Write("sub/local.py", "AutoModel.from_pretrained('org/ignored-nested')\n");
  Write("other/local.py", "AutoModel.from_pretrained('org/nested-rule-not-here')\n");
  for (const char* dir : {".git", "node_modules/pkg", ".venv/lib", "venv", "__pycache__"}) {
    Write(std::string(dir) + "/m.py", "AutoModel.from_pretrained('org/always-skipped')\n");
  }
  ScanReport r = Scan();
  EXPECT_THAT(Files(r),
              ElementsAre("keep.log.py org/negated", "other/local.py org/nested-rule-not-here",
                          "sub/top_only.py org/not-anchored-here"));
  ScanOptions no_ignore;
  no_ignore.honour_gitignore = false;
  EXPECT_EQ(Scan(no_ignore).references.size(), 7u);  // the always-skipped stay skipped
}

TEST_F(ScanTreeTest, SymlinkLoopsAreNotFollowed) {
  Write("a/m.py", "AutoModel.from_pretrained('org/once')\n");
  ASSERT_EQ(symlink("..", (root_ + "/a/loop").c_str()), 0);
  ASSERT_EQ(symlink(root_.c_str(), (root_ + "/a/abs-loop").c_str()), 0);
  ASSERT_EQ(symlink("m.py", (root_ + "/a/link.py").c_str()), 0);
  ASSERT_EQ(symlink("missing", (root_ + "/a/dangling.py").c_str()), 0);
  ScanReport r = Scan();
  EXPECT_THAT(Files(r), ElementsAre("a/m.py org/once"));
  EXPECT_THAT(Problem(r, "a/loop"), HasSubstr("symbolic link to a directory, not followed"));
  EXPECT_THAT(Problem(r, "a/abs-loop"), HasSubstr("not followed"));
  EXPECT_EQ(r.problems.size(), 2u);
}

TEST_F(ScanTreeTest, HugeSparseFileIsNotedAndNeverRead) {
  int fd = open((root_ + "/huge.py").c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, off_t{10} << 30), 0);  // 10 GiB, sparse
  close(fd);
  auto start = std::chrono::steady_clock::now();
  ScanReport r = Scan();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THAT(Problem(r, "huge.py"),
              HasSubstr("over the 1,048,576-byte size cap (10,737,418,240 bytes)"));
  EXPECT_EQ(r.files_scanned, 0);
  EXPECT_EQ(r.files_skipped, 1);
}

TEST_F(ScanTreeTest, LongLinesInvalidUtf8AndBinaries) {
  std::string line;
  while (line.size() < 1000000) line += "x = 1; ";
  Write("long.py", line + "AutoModel.from_pretrained('org/after-a-long-line')\n");
  Write("bytes.py",
        "# \xff\xfe\xc3\x28\nm = AutoModel.from_pretrained('org/\xc3\x28')\n"
        "n = AutoModel.from_pretrained('org/valid')  # \xe2\x82\n");
  constexpr char kBinary[] = "AutoModel.from_pretrained('org/binary')\0\1\2";
  Write("weights.py", std::string(kBinary, sizeof kBinary - 1));
  Write("na\xffme.py", "AutoModel.from_pretrained('org/odd-file-name')\n");
  ScanReport r = Scan();
  EXPECT_THAT(Files(r), ElementsAre("bytes.py org/valid", "long.py org/after-a-long-line",
                                    "na\xffme.py org/odd-file-name"));
  EXPECT_THAT(Problem(r, "weights.py"), HasSubstr("binary"));
}

TEST_F(ScanTreeTest, UnreadableFilesAndDirectories) {
  Write("locked.py", "AutoModel.from_pretrained('org/locked')\n");
  Write("closed/m.py", "AutoModel.from_pretrained('org/closed')\n");
  chmod((root_ + "/locked.py").c_str(), 0);
  chmod((root_ + "/closed").c_str(), 0);
  ScanReport r = Scan();
  if (geteuid() == 0) {  // root reads files whatever their mode: both are scanned
    EXPECT_EQ(r.references.size(), 2u);
    EXPECT_THAT(r.problems, IsEmpty());
    return;
  }
  EXPECT_THAT(Problem(r, "locked.py"), HasSubstr("cannot open: Permission denied"));
  EXPECT_THAT(Problem(r, "closed"), HasSubstr("cannot open directory: Permission denied"));
  EXPECT_THAT(r.references, IsEmpty());
}

TEST_F(ScanTreeTest, FilesThatVanishOrChangeBetweenListingAndReading) {
  Write("gone.py", "AutoModel.from_pretrained('org/gone')\n");
  Write("fifo.py", "AutoModel.from_pretrained('org/fifo')\n");
  Write("grows.py", "AutoModel.from_pretrained('org/grows')\n");
  Write("stays.py", "AutoModel.from_pretrained('org/stays')\n");
  ScanOptions options;
  options.max_file_bytes = 4096;
  options.before_open = [&](const std::string& path) {
    if (path.ends_with("/gone.py")) unlink(path.c_str());
    if (path.ends_with("/fifo.py")) {
      unlink(path.c_str());
      mkfifo(path.c_str(), 0600);  // opening it for reading must not block
    }
    if (path.ends_with("/grows.py")) std::ofstream(path, std::ios::app) << std::string(8192, '#');
  };
  ScanReport r = Scan(options);
  EXPECT_THAT(Files(r), ElementsAre("stays.py org/stays"));
  EXPECT_THAT(Problem(r, "gone.py"), HasSubstr("vanished during the scan"));
  EXPECT_THAT(Problem(r, "fifo.py"), HasSubstr("not a regular file"));
  EXPECT_THAT(Problem(r, "grows.py"), HasSubstr("size cap"));
  EXPECT_EQ(r.files_scanned, 1);
  EXPECT_EQ(r.files_skipped, 3);
}

TEST_F(ScanTreeTest, RootsFilesAndErrors) {
  Write("a/m.py", "AutoModel.from_pretrained('org/a')\n");
  Write("b/serve.sh", "vllm serve org/b\n");
  Result<ScanReport> two = ScanTree({root_ + "/a/", root_ + "/b"}, {});
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->references.size(), 2u);
  EXPECT_EQ(two->references[0].file, root_ + "/a/m.py");
  EXPECT_EQ(two->references[1].file, root_ + "/b/serve.sh");

  Result<ScanReport> file = ScanTree({root_ + "/b/serve.sh"}, {});
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(file->references.size(), 1u);
  EXPECT_EQ(file->references[0].file, root_ + "/b/serve.sh");

  Result<ScanReport> missing = ScanTree({root_ + "/nope"}, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
  EXPECT_THAT(missing.error().message, HasSubstr("nope: No such file or directory"));
  EXPECT_FALSE(ScanTree({}, {}).ok());
}

}  // namespace
}  // namespace hubwatch::audit
