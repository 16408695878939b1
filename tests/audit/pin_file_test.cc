#include "daemon/audit/pin_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/audit/find_references.h"
#include "tests/audit/test_support.h"

namespace hubwatch::audit {
namespace {

using testing::Brief;
using ::testing::ElementsAre;
using testing::Lines;

TEST(PinFile, OnePinPerLineWithComments) {
  FileFindings f =
      FindReferences("deploy/prod.hfpins",
                     "# production models\n"
                     "meta-llama/Llama-3.1-8B-Instruct@0123456789abcdef0123456789abcdef01234567\n"
                     "\n"
                     "  gpt2@main   # the tokenizer test\n"
                     "Qwen/Qwen2.5-0.5B\n"
                     "BAAI/bge-small-en@abc1234\r\n");
  EXPECT_THAT(
      Brief(f.references),
      ElementsAre("2:1 meta-llama/Llama-3.1-8B-Instruct@0123456789abcdef0123456789abcdef01234567 "
                  "(full-sha) pinfile",
                  "4:3 gpt2@main (name) pinfile", "5:1 Qwen/Qwen2.5-0.5B (floating) pinfile",
                  "6:1 BAAI/bge-small-en@abc1234 (short-sha) pinfile"));
  EXPECT_TRUE(f.unresolved.empty());
}

TEST(PinFile, StrictFileReportsLinesThatAreNotPins) {
  FileFindings f =
      FindReferences("x.hfpins", "org/a@v1\nnot a pin\n./local/model\norg/b@bad rev\n");
  EXPECT_THAT(Brief(f.references), ElementsAre("1:1 org/a@v1 (name) pinfile"));
  EXPECT_THAT(Lines(f.unresolved), ElementsAre(2, 3, 4));
}

TEST(PinFile, StrictFileSaysWhyEachLineIsNotAPin) {
  FileFindings f =
      FindReferences("x.hfpins", "org/a@v1\n./local/model\norg/b@bad rev\nnot a pin \x1b[31m\n");
  ASSERT_EQ(f.unresolved.size(), 3u);
  EXPECT_EQ(f.unresolved[0].why, "pinfile: a local path, not a pin: \"./local/model\"");
  EXPECT_EQ(f.unresolved[1].why,
            "pinfile: \"bad rev\" is not a git revision, in \"org/b@bad rev\"");
  // Quoted as QuoteSource quotes: the escape byte cannot reach a terminal.
  EXPECT_EQ(f.unresolved[2].why, "pinfile: not a pin (org/name@revision): \"not a pin \\x1b[31m\"");
}

TEST(PinFile, ModelsTxtMostlyPinsKeepsItsPinsAndReportsTheOtherLines) {
  FileFindings f =
      FindReferences("models.txt", "org/a@v1\norg/b\nthis line is no pin\norg/c@abc1234\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("1:1 org/a@v1 (name) pinfile", "2:1 org/b (floating) pinfile",
                          "4:1 org/c@abc1234 (short-sha) pinfile"));
  ASSERT_EQ(f.unresolved.size(), 1u);
  EXPECT_EQ(f.unresolved[0].line, 3);
  EXPECT_EQ(f.unresolved[0].why, "pinfile: not a pin (org/name@revision): \"this line is no pin\"");
}

TEST(PinFile, ModelsTxtMostlyNotPinsIsAnotherKindOfListAndReadsAsNothing) {
  EXPECT_EQ(FindReferences("models.txt", "org/a@v1\norg/b\n").references.size(), 2u);
  FileFindings prose = FindReferences("models.txt", "We compared these models:\norg/a\n");
  EXPECT_TRUE(prose.references.empty());
  EXPECT_TRUE(prose.unresolved.empty());
  FileFindings list = FindReferences("models.txt", "numpy==1.26\ntorch>=2.1\nscipy\norg/a\n");
  EXPECT_TRUE(list.references.empty());
  EXPECT_TRUE(list.unresolved.empty());
  EXPECT_EQ(FileKindOf("src/other.txt"), FileKind::kNone);
}

TEST(PinFile, TheRevisionsPlaceIsItsOwnBytes) {
  FileFindings f = FindReferences("x.hfpins", "  org/a@1234567  # 1234567\n");
  ASSERT_EQ(f.references.size(), 1u);
  EXPECT_THAT(f.references[0].revision_at,
              ElementsAre(SourceSpan{.line = 1, .column = 9, .length = 7}));
}

}  // namespace
}  // namespace hubwatch::audit
