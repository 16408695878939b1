// The hostile fixture (tests/fixtures/hub-hostile): upstream text built to attack whoever shows
// it renders inert in the model page, its twin, the index and /changes - no script element, no
// event-handler attribute, no javascript: URL - while the text is still shown.

#include <gtest/gtest.h>

#include <regex>

#include "daemon/page/index_page.h"
#include "daemon/page/list_pages.h"
#include "daemon/page/render.h"
#include "tests/page/page_env.h"
#include "tests/page/page_fixture.h"

namespace hubwatch::page::testing {

// Fails when `html` has a script element, an on*= attribute inside a tag, or a javascript: URL
// in an attribute. Text between tags is what the reader sees, and may say anything.
void ExpectInertHtml(const std::string& html, const std::string& what) {
  EXPECT_EQ(html.find("<script"), std::string::npos) << what;
  EXPECT_EQ(html.find("<img src=x"), std::string::npos) << what;
  EXPECT_EQ(html.find("<b "), std::string::npos) << what;
  static const std::regex tag("<[^>]*>");
  static const std::regex handler("\\son[a-z]+\\s*=", std::regex::icase);
  static const std::regex js("javascript:", std::regex::icase);
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator();
       ++it) {
    const std::string t = it->str();
    EXPECT_FALSE(std::regex_search(t, handler)) << what << ": " << t;
    EXPECT_FALSE(std::regex_search(t, js)) << what << ": " << t;
  }
}

// The Markdown twin outside its code blocks and code spans (which CommonMark shows as text,
// never as HTML) has no raw HTML at all, and no link or image to a javascript: URL.
void ExpectInertMarkdown(const std::string& md) {
  std::string prose;
  bool fenced = false;
  size_t start = 0;
  while (start < md.size()) {
    size_t end = md.find('\n', start);
    if (end == std::string::npos) end = md.size();
    const std::string line = md.substr(start, end - start);
    if (line.starts_with("```")) {
      fenced = !fenced;
    } else if (!fenced) {
      static const std::regex code_span("(`+) .*? \\1");
      prose += std::regex_replace(line, code_span, "code") + "\n";
    }
    start = end + 1;
  }
  EXPECT_EQ(prose.find('<'), std::string::npos)
      << prose.substr(prose.find('<') > 200 ? prose.find('<') - 200 : 0, 300);
  EXPECT_EQ(prose.find("](javascript"), std::string::npos);
}

namespace {

TEST(HostileTest, EveryPageAndTwinIsInertAndStillShowsTheText) {
  auto s = store::Store::Open(PageDb());
  ASSERT_TRUE(s.ok()) << s.error().message;
  BuiltPage p = BuildPage(**s, kHostile);
  ASSERT_EQ(p.history.size(), 2u);
  ASSERT_TRUE(p.estimate.estimate.has_value()) << p.estimate.unavailable;
  const std::string html = RenderHtml(p.doc);
  ExpectInertHtml(html, "model page");
  // The payloads are shown as text: the title, the author, the message, the config string, the
  // template diff, the token string.
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;&quot; onclick=&quot;alert(2)&quot;"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;b onmouseover=alert(8)&gt;mallory&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;/textarea&gt;javascript:alert(4)"), std::string::npos);
  EXPECT_NE(html.find("_name_or_path"), std::string::npos);
  EXPECT_NE(html.find("Tags on the Hub: <code>transformers</code> <code>&lt;script&gt;alert(1)"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;{{ m[&#39;role&#39;] }}&lt;/script&gt;"), std::string::npos);
  const std::string md = RenderMarkdown(p.doc);
  ExpectInertMarkdown(md);
  EXPECT_NE(md.find("&lt;script&gt;alert\\(1\\)&lt;/script&gt;"), std::string::npos);

  auto index = LoadIndexPage(**s, {}, false);
  ASSERT_TRUE(index.ok());
  ExpectInertHtml(RenderHtml(BuildIndexPage(*index)), "index");
  // The search form keeps what was asked, as text: a hostile term is escaped there too.
  IndexQuery asked;
  asked.search.name = "\"><script>alert(9)</script>";
  asked.search.family = "<b>";
  auto search = LoadIndexPage(**s, asked, false);
  ASSERT_TRUE(search.ok());
  const std::string found = RenderHtml(BuildIndexPage(*search));
  ExpectInertHtml(found, "search");
  EXPECT_NE(found.find("value=\"&quot;&gt;&lt;script&gt;alert(9)&lt;/script&gt;\""),
            std::string::npos);
  ChangesPage changes;
  auto all = (*s)->revisions().BrowseChanges({.repo = kHostile, .limit = 100});
  ASSERT_TRUE(all.ok());
  changes.changes = *all;
  ASSERT_FALSE(changes.changes.empty());
  const std::string log = RenderHtml(BuildChangesPage(changes));
  ExpectInertHtml(log, "changes");
  EXPECT_NE(log.find("&lt;script&gt;"), std::string::npos);
}

TEST(HostileTest, APastedConfigAndItsErrorStayInTheTextarea) {
  PlanForm form{.action = "/plan",
                .config = "{\"x\": \"</textarea><script>alert(1)</script>\"}",
                .error = "config.json: \"<script>\" is not a model_type"};
  const std::string html = RenderHtml(BuildPlanPage(form, nullptr, "http://127.0.0.1:1"));
  ExpectInertHtml(html, "plan");
  EXPECT_NE(html.find("&lt;/textarea&gt;&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("</textarea>"), html.rfind("</textarea>"));
}

}  // namespace
}  // namespace hubwatch::page::testing
