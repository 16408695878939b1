// Hostile Hub bodies: what the parsers keep of a list is its cap (hub_json.h), fields nobody
// reads are dropped while parsing, and parsing such a body keeps the memory flat.

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HUBWATCH_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(HUBWATCH_TEST_ASAN)
#include <sanitizer/allocator_interface.h>
#endif

#include "tracker/hub/hub_json.h"
#include "tracker/hub/json_shape.h"

namespace hubwatch::hub {
namespace {

constexpr char kUrl[] = "http://127.0.0.1/api/models?author=acme";
constexpr char kSha[] = "0123456789abcdef0123456789abcdef01234567";

// `n` copies of `element`, comma-separated.
std::string Repeated(const std::string& element, size_t n) {
  std::string out;
  out.reserve(n * (element.size() + 1));
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += element;
  }
  return out;
}

// A listed model with `extra` spliced in among its fields.
std::string ListedModel(const std::string& id, const std::string& extra) {
  return R"({"id":")" + id + R"(","sha":")" + kSha + R"(",)" + extra +
         R"(,"lastModified":"2025-01-02T03:04:05.000Z","likes":7,"downloads":9})";
}

// A "VmHWM:"-style line of /proc/self/status, in KiB; -1 when absent.
long StatusKiB(const std::string& key) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  }
  return -1;
}

// Growth of the peak resident set, in MiB, while `work` runs in a forked child: a parse's
// peak, whatever it freed before returning. The child first hands its free heap back to the
// system (ASan's quarantine included) and resets its peak, so what the work allocates takes
// fresh pages. 255 when the child failed.
int PeakGrowthMiB(const std::function<bool()>& work) {
  const pid_t child = fork();
  if (child == 0) {
#if defined(__SANITIZE_ADDRESS__) || defined(HUBWATCH_TEST_ASAN)
    __sanitizer_purge_allocator();
#else
    malloc_trim(0);
#endif
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
    const long before = StatusKiB("VmHWM:");
    const bool ok = work();
    const long mib = (StatusKiB("VmHWM:") - before) / 1024;
    _exit(ok && before >= 0 ? static_cast<int>(std::clamp<long>(mib, 0, 254)) : 255);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 255;
  return WEXITSTATUS(status);
}

// 300,000 one-letter tags in one item (a 1.2 MiB body): 3,000,000 take seconds to lex under
// AddressSanitizer, and 300,000 are 70 times the cap.
constexpr size_t kHostileTags = 300'000;

TEST(HubJsonCaps, AListedModelKeepsAtMostTheTagCapAndAllItsFields) {
  const std::string body =
      "[" + ListedModel("acme/big", R"("tags":[)" + Repeated(R"("t")", kHostileTags) + "]") + "," +
      ListedModel("acme/small", R"("tags":["a","b"])") + "]";
  const auto start = std::chrono::steady_clock::now();
  auto page = ParseModelListJson(body, kUrl);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->size(), 2u);
  const ModelSummary& big = (*page)[0];
  EXPECT_EQ(big.tags.size(), kMaxModelTags);
  EXPECT_TRUE(big.tags_cut);
  EXPECT_EQ(big.id, "acme/big");
  EXPECT_EQ(big.sha.value_or(""), kSha);
  EXPECT_EQ(big.last_modified.value_or(""), "2025-01-02T03:04:05.000Z");
  EXPECT_EQ(big.likes.value_or(0), 7u);
  EXPECT_EQ(big.downloads.value_or(0), 9u);
  const ModelSummary& small = (*page)[1];
  EXPECT_EQ(small.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(small.tags_cut);
  EXPECT_EQ(small.likes.value_or(0), 7u);
  std::cout << "[   INFO   ] " << body.size() / 1024 << " KiB page parsed in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n";
}

TEST(HubJsonCaps, UnknownFieldsOfAListedModelAreDroppedWhileParsing) {
  // A field no reader reads (cardData, widgetData, config: expandable ones), 100,000 objects big.
  const std::string junk = R"("cardData":{"x":[)" + Repeated(R"({"k":[1,2]})", 100'000) + "]}";
  const std::string body = "[" + ListedModel("acme/junk", junk) + "]";
  auto page = ParseModelListJson(body, kUrl);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0].id, "acme/junk");
  EXPECT_EQ((*page)[0].sha.value_or(""), kSha);
  EXPECT_EQ((*page)[0].likes.value_or(0), 7u);
  // Nothing of the unknown field is materialised: its DOM took 43 MiB under ASan.
  const int mib = PeakGrowthMiB([&] { return ParseModelListJson(body, kUrl).ok(); });
  EXPECT_LT(mib, 16) << "parsing a " << body.size() / 1024 << " KiB page";
  std::cout << "[   INFO   ] peak RSS +" << mib << " MiB\n";
}

TEST(HubJsonCaps, ParsingAHugeTagListKeepsTheMemoryFlat) {
  const std::string body =
      "[" + ListedModel("acme/big", R"("tags":[)" + Repeated(R"("t")", kHostileTags) + "]") + "]";
  // Before the caps this 1.2 MiB body took 77 MiB under ASan: a json value and a string a tag.
  const int mib = PeakGrowthMiB([&] { return ParseModelListJson(body, kUrl).ok(); });
  EXPECT_LT(mib, 16) << "parsing a " << body.size() / 1024 << " KiB page";
  std::cout << "[   INFO   ] peak RSS +" << mib << " MiB\n";
}

TEST(HubJsonCaps, ModelInfoKeepsTheFirstSiblingsAndSaysItWasCut) {
  const std::string siblings = R"({"rfilename":"first"},)" +
                               Repeated(R"({"rfilename":"f"})", kMaxModelSiblings - 2) +
                               R"(,{"rfilename":"last"},)" + Repeated(R"({"rfilename":"x"})", 5);
  const std::string body = R"({"id":"acme/files","sha":")" + std::string(kSha) +
                           R"(","siblings":[)" + siblings + R"(],"tags":["x"],"likes":3})";
  auto info = ParseModelInfoJson(body, "http://127.0.0.1/api/models/acme/files");
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  ASSERT_EQ(info->siblings.size(), kMaxModelSiblings);
  EXPECT_TRUE(info->siblings_cut);
  EXPECT_EQ(info->siblings.front().rfilename, "first");
  EXPECT_EQ(info->siblings.back().rfilename, "last");
  EXPECT_EQ(info->id, "acme/files");
  EXPECT_EQ(info->sha.value_or(""), kSha);
  EXPECT_EQ(info->tags, std::vector<std::string>{"x"});
  EXPECT_FALSE(info->tags_cut);
  EXPECT_EQ(info->likes.value_or(0), 3u);

  auto few = ParseModelInfoJson(R"({"id":"a/b","siblings":[{"rfilename":"c"}]})", kUrl);
  ASSERT_TRUE(few.ok());
  EXPECT_FALSE(few->siblings_cut);
}

TEST(HubJsonCaps, PagesAndRefListsOverTheirCapAreProtocolErrors) {
  // The count is checked before the entries: scalars keep the bodies cheap to parse.
  const std::string over_page = "[" + Repeated("0", kMaxPageEntries + 1) + "]";
  const auto expect_cut = [](const HubError& e, size_t cap) {
    EXPECT_EQ(e.kind, HubErrorKind::kProtocol);
    EXPECT_NE(e.detail.find("lists more than " + std::to_string(cap) + " entries"),
              std::string::npos)
        << e.detail;
  };
  auto models = ParseModelListJson(over_page, kUrl);
  ASSERT_FALSE(models.ok());
  expect_cut(models.error(), kMaxPageEntries);
  auto commits = ParseCommitsJson(over_page, kUrl);
  ASSERT_FALSE(commits.ok());
  expect_cut(commits.error(), kMaxPageEntries);
  auto tree = ParseTreeJson(over_page, kUrl);
  ASSERT_FALSE(tree.ok());
  expect_cut(tree.error(), kMaxPageEntries);
  for (const char* list : {"branches", "tags", "converts", "pullRequests"}) {
    auto refs = ParseRefsJson(
        std::string(R"({")") + list + R"(":[)" + Repeated("0", kMaxRefsPerList + 1) + "]}", kUrl);
    ASSERT_FALSE(refs.ok()) << list;
    expect_cut(refs.error(), kMaxRefsPerList);
    EXPECT_NE(refs.error().detail.find(std::string("\"") + list + "\""), std::string::npos)
        << refs.error().detail;
  }

  // At the cap: every entry is there.
  auto full = ParseModelListJson("[" + Repeated(R"({"id":"a/b"})", kMaxPageEntries) + "]", kUrl);
  ASSERT_TRUE(full.ok()) << full.error().ToString();
  EXPECT_EQ(full->size(), kMaxPageEntries);
}

TEST(HubJsonCaps, CommitAuthorsAndDtypesKeepTheirFirstEntries) {
  auto commits = ParseCommitsJson(R"([{"id":"c","title":"t","date":"d","authors":[)" +
                                      Repeated(R"({"user":"u"})", kMaxCommitAuthors + 100) + "]}]",
                                  kUrl);
  ASSERT_TRUE(commits.ok()) << commits.error().ToString();
  EXPECT_EQ(commits->at(0).authors.size(), kMaxCommitAuthors);
  std::string dtypes;
  for (size_t i = 0; i < kMaxSafetensorsDtypes + 10; ++i) {
    dtypes += (i ? ",\"D" : "\"D") + std::to_string(1000 + i) + "\":1";
  }
  auto info = ParseModelInfoJson(
      R"({"id":"a/b","safetensors":{"parameters":{)" + dtypes + R"(},"total":74}})", kUrl);
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(info->safetensors_parameters.size(), kMaxSafetensorsDtypes);
  EXPECT_EQ(info->safetensors_total.value_or(0), 74u);
}

TEST(HubJsonCaps, MistypedFieldsAreStillReported) {
  // A container where a string or a list was expected is kept (empty) for the type checks.
  auto tags = ParseModelListJson(R"([{"id":"a/b","tags":{"x":[1,2,3]}}])", kUrl);
  ASSERT_FALSE(tags.ok());
  EXPECT_NE(tags.error().detail.find("\"tags\" is not an array"), std::string::npos);
  auto id = ParseModelInfoJson(R"({"id":["a/b"]})", kUrl);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.error().detail.find("\"id\" is not a string"), std::string::npos);
  auto sibling = ParseModelInfoJson(R"({"id":"a/b","siblings":["c"]})", kUrl);
  ASSERT_FALSE(sibling.ok());
  EXPECT_NE(sibling.error().detail.find("a sibling is not an object"), std::string::npos);
  auto body = ParseModelListJson(R"({"id":"a/b"})", kUrl);
  ASSERT_FALSE(body.ok());
  EXPECT_NE(body.error().detail.find("body is not an array"), std::string::npos);
  EXPECT_FALSE(ParseModelListJson(R"([{"id":"a/b"}] x)", kUrl).ok()) << "trailing text";
}

TEST(JsonShape, KeepsTheNamedMembersAndTheFirstElements) {
  static constexpr JsonShape kList{
      .kind = JsonShape::Kind::kList, .element = &kJsonScalar, .cap = 2};
  static constexpr JsonMember kMembers[] = {{"a", &kJsonScalar}, {"l", &kList}};
  static constexpr JsonShape kRoot{.kind = JsonShape::Kind::kObject, .members = kMembers};
  const ShapedJson doc =
      ParseShaped(R"({"a":1,"z":{"deep":[1,2]},"l":[5,6,7,8],"a":2,"q":"s"})", kRoot);
  ASSERT_FALSE(doc.root.is_discarded());
  EXPECT_EQ(doc.root, nlohmann::json::parse(R"({"a":1,"l":[5,6]})")) << "the first \"a\" wins";
  EXPECT_EQ(doc.Listed(doc.root["l"]), 4u);
  EXPECT_EQ(doc.Listed(doc.root), 2u);
  EXPECT_TRUE(ParseShaped("[1,", kRoot).root.is_discarded());
  EXPECT_TRUE(ParseShaped("", kRoot).root.is_discarded());
}

}  // namespace
}  // namespace hubwatch::hub
