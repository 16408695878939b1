// Escaping per context, the hrefs a page may make, gzip.

#include "daemon/page/escape.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "daemon/page/gzip.h"
#include "daemon/page/href.h"
#include "daemon/page/render.h"

namespace hubwatch::page {
namespace {

TEST(EscapeTest, HtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(Html("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;");
  EXPECT_EQ(Html("line\nnext\ttab"), "line\nnext\ttab");
}

TEST(EscapeTest, ForbiddenAndInvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(Html(std::string("a\0b", 3)),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(Html("\x1b[31m\r"), "\xEF\xBF\xBD[31m\xEF\xBF\xBD");
  EXPECT_EQ(Html("\xff\xc3"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(Html("\xc2\x9b"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // C1 control
  EXPECT_EQ(Html("gemma × 3,584 é"), "gemma × 3,584 é");
}

TEST(EscapeTest, MarkdownNeitherStartsHtmlNorMarkup) {
  std::string out;
  AppendMarkdown(out, "<script>[x](javascript:alert(1)) *b* `c` | d\nnext");
  EXPECT_EQ(out.find('<'), std::string::npos);
  EXPECT_EQ(out.find("[x]("), std::string::npos);
  EXPECT_NE(out.find("&lt;script&gt;\\[x\\]\\(javascript:alert\\(1\\)\\)"), std::string::npos);
  EXPECT_EQ(out.find('\n'), std::string::npos);
}

// Trojan Source: a right-to-left override in a commit title or file name is shown as text in
// every page context, never applied.
TEST(EscapeTest, BidiControlsAreShownAsText) {
  const std::string title = "fix\xe2\x80\xaeTXT.exe \xe2\x81\xa6iso\xe2\x81\xa9 \xe2\x80\x8fmark";
  EXPECT_EQ(Html(title), "fix\\u202eTXT.exe \\u2066iso\\u2069 \\u200fmark");
  std::string md;
  AppendMarkdown(md, title);
  EXPECT_EQ(md, "fix\\\\u202eTXT.exe \\\\u2066iso\\\\u2069 \\\\u200fmark");
  EXPECT_EQ(CleanText(title), Html(title));
  for (const std::string& out : {Html(title), md, CleanText(title)}) {
    EXPECT_EQ(out.find("\xe2\x80\xae"), std::string::npos);
    EXPECT_EQ(out.find("\xe2\x81"), std::string::npos);
  }
}

TEST(EscapeTest, CodeBlocksAreFencedLongerThanTheirBackticks) {
  Document doc;
  doc.h1 = "t";
  doc.sections.push_back({"s", "S", {Preformatted{"a ```` b\n", {}}}});
  const std::string md = RenderMarkdown(doc);
  EXPECT_NE(md.find("`````\na ```` b\n`````\n"), std::string::npos) << md;
}

TEST(HrefTest, OnlyOurPathsAndHubUrlsFromValidIds) {
  EXPECT_TRUE(IsSafeHref("/models/google/gemma-2-9b-it?revision=abc"));
  EXPECT_TRUE(IsSafeHref("https://huggingface.co/google/gemma-2-9b-it"));
  EXPECT_FALSE(IsSafeHref("javascript:alert(1)"));
  EXPECT_FALSE(IsSafeHref("//evil.example/x"));
  EXPECT_FALSE(IsSafeHref("/x\" onclick=\"y"));
  EXPECT_FALSE(IsSafeHref("https://huggingface.co.evil.example/"));
  EXPECT_FALSE(IsSafeHref("http://example.com/"));
  EXPECT_EQ(ModelPath("google/gemma-2-9b-it"), "/models/google/gemma-2-9b-it");
  EXPECT_EQ(ModelPath("<script>/x"), "");
  EXPECT_EQ(HubCommitUrl("google/gemma-2-9b-it", std::string(40, 'a')),
            "https://huggingface.co/google/gemma-2-9b-it/commit/" + std::string(40, 'a'));
  EXPECT_EQ(HubCommitUrl("google/gemma-2-9b-it", "javascript:alert(1)"), "");
  EXPECT_EQ(QueryEscape("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
  EXPECT_EQ(Anchor("Gemma2 <x>"), "gemma2--x-");
}

TEST(HrefTest, RenderersDropUnsafeLinksButKeepTheirText) {
  Document doc;
  doc.h1 = "t";
  doc.lead.push_back(Paragraph{{Link("click me", "javascript:alert(1)")}});
  doc.lead.push_back(Image{"javascript:alert(2)", "x"});
  for (const std::string& out : {RenderHtml(doc), RenderMarkdown(doc)}) {
    EXPECT_EQ(out.find("javascript:"), std::string::npos) << out;
    EXPECT_NE(out.find("click me"), std::string::npos);
  }
}

TEST(GzipTest, RoundTripsAndHonoursQZero) {
  const std::string text(5000, 'x');
  Result<std::string> gz = Gzip(text);
  ASSERT_TRUE(gz.ok());
  EXPECT_LT(gz->size(), 200u);
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string back(6000, '\0');
  z.next_in = reinterpret_cast<Bytef*>(gz->data());
  z.avail_in = static_cast<uInt>(gz->size());
  z.next_out = reinterpret_cast<Bytef*>(back.data());
  z.avail_out = static_cast<uInt>(back.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  back.resize(z.total_out);
  inflateEnd(&z);
  EXPECT_EQ(back, text);
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br"));
  EXPECT_TRUE(AcceptsGzip("br;q=1.0, gzip;q=0.8"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip(""));
}

}  // namespace
}  // namespace hubwatch::page
