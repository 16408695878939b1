// Document -> HTML5. Accessible by construction: lang, one h1, h2 per section and h3/h4 inside,
// th scope, a caption on every table, chips that say their impact in words.

#include <algorithm>
#include <string>
#include <string_view>

#include "daemon/page/chart_svg.h"
#include "daemon/page/href.h"
#include "daemon/page/html_forms.h"
#include "daemon/page/html_markup.h"
#include "daemon/page/render.h"

namespace hubwatch::page {
namespace {

// Lays out a Document's blocks in HTML through `html`; inline spans and escaping are
// HtmlMarkup's, forms html_forms.h's.
class HtmlWriter {
 public:
  explicit HtmlWriter(HtmlMarkup& html) : html_(html) {}

  void Block(const page::Block& b) {
    std::visit([this](const auto& v) { Out(v); }, b);
  }

 private:
  void OpenFold(const std::string& folded) {
    if (folded.empty()) return;
    html_.Raw("<details><summary>");
    html_.Text(folded);
    html_.Raw("</summary>\n");
  }
  void CloseFold(const std::string& folded) {
    if (!folded.empty()) html_.Raw("</details>\n");
  }

  void Out(const Paragraph& p) {
    html_.Raw("<p>");
    html_.Spans(p.spans);
    html_.Raw("</p>\n");
  }

  void Out(const Tiles& t) {
    html_.Raw("<dl class=\"tiles\">\n");
    for (const Tile& tile : t.tiles) {
      html_.Raw("<div class=\"tile ");
      html_.Raw(ToneClass(tile.tone));
      html_.Raw("\"><dt>");
      html_.Text(tile.label);
      html_.Raw("</dt><dd class=\"value\">");
      html_.Text(tile.value);
      html_.Raw("</dd>");
      if (!tile.note.empty()) {
        html_.Raw("<dd class=\"note\">");
        html_.Text(tile.note);
        html_.Raw("</dd>");
      }
      html_.Raw("</div>\n");
    }
    html_.Raw("</dl>\n");
  }

  void Out(const Table& t) {
    OpenFold(t.folded);
    html_.Raw("<div class=\"scroll\"><table>\n<caption>");
    html_.Text(t.caption);
    html_.Raw("</caption>\n<thead><tr>");
    for (size_t c = 0; c < t.header.size(); ++c) {
      html_.Raw(Numeric(t, c) ? "<th scope=\"col\" class=\"num\">" : "<th scope=\"col\">");
      html_.Text(t.header[c]);
      html_.Raw("</th>");
    }
    html_.Raw("</tr></thead>\n<tbody>\n");
    for (const auto& row : t.rows) {
      html_.Raw("<tr>");
      for (size_t c = 0; c < row.size(); ++c) {
        const bool head = c == 0 && t.row_headers;
        if (head) {
          html_.Raw("<th scope=\"row\">");
        } else {
          html_.Raw(Numeric(t, c) ? "<td class=\"num\">" : "<td>");
        }
        html_.Spans(row[c]);
        html_.Raw(head ? "</th>" : "</td>");
      }
      html_.Raw("</tr>\n");
    }
    html_.Raw("</tbody>\n</table></div>\n");
    CloseFold(t.folded);
  }

  static bool Numeric(const Table& t, size_t c) { return c < t.numeric.size() && t.numeric[c]; }

  void Out(const Preformatted& p) {
    OpenFold(p.folded);
    html_.Raw("<pre><code>");
    html_.Text(p.text);
    html_.Raw("</code></pre>\n");
    CloseFold(p.folded);
  }

  void Out(const Image& i) {
    if (!IsSafeHref(i.src)) return;
    html_.Raw("<p><img src=\"");
    html_.Text(i.src);
    html_.Raw("\" alt=\"");
    html_.Text(i.alt);
    html_.Raw("\"></p>\n");
  }

  void Out(const Heading& h) {
    const char* level = h.level == 4 ? "4" : "3";
    html_.Raw("<h");
    html_.Raw(level);
    if (!h.id.empty()) {
      html_.Raw(" id=\"");
      html_.Text(h.id);
      html_.Raw("\"");
    }
    html_.Raw(">");
    html_.Spans(h.spans);
    html_.Raw("</h");
    html_.Raw(level);
    html_.Raw(">\n");
  }

  void Out(const BulletList& l) {
    html_.Raw("<ul>\n");
    for (const page::Spans& item : l.items) {
      html_.Raw("<li>");
      html_.Spans(item);
      html_.Raw("</li>\n");
    }
    html_.Raw("</ul>\n");
  }

  void Out(const PlanForm& f) { AppendPlanForm(html_, f); }
  void Out(const BarChart& c) { html_.Raw(BarChartSvg(c)); }
  void Out(const DotStrip& d) { html_.Raw(DotStripSvg(d)); }

  void Out(const FilterForm& f) { AppendFilterForm(html_, f); }

  HtmlMarkup& html_;
};

}  // namespace

std::string RenderHtml(const Document& doc) {
  std::string out;
  out.reserve(64 * 1024);
  HtmlMarkup w(out);
  HtmlWriter blocks(w);
  w.Raw(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"color-scheme\" content=\"light dark\">\n<title>");
  w.Text(doc.title);
  w.Raw("</title>\n<link rel=\"stylesheet\" href=\"");
  w.Raw(kStylesheetPath);
  w.Raw("\">\n");
  for (const auto& [type, href] : doc.alternates) {
    if (!IsSafeHref(href)) continue;
    w.Raw("<link rel=\"alternate\" type=\"");
    w.Text(type);
    w.Raw("\" href=\"");
    w.Text(href);
    w.Raw("\">\n");
  }
  w.Raw(
      "</head>\n<body>\n<header class=\"site\"><a href=\"/\">hubwatch</a>"
      "<nav aria-label=\"Site\"><a href=\"/\">Models</a> <a href=\"/changes\">Changes</a> "
      "<a href=\"/plan\">Paste a model</a> <a href=\"/calibration\">Calibration</a></nav>"
      "</header>\n<main>\n");
  if (!doc.breadcrumb.empty()) {
    w.Raw("<nav class=\"crumbs\" aria-label=\"Breadcrumb\">");
    w.Spans(doc.breadcrumb);
    w.Raw("</nav>\n");
  }
  w.Raw("<h1>");
  w.Text(doc.h1);
  w.Raw("</h1>\n");
  for (const Block& b : doc.lead) blocks.Block(b);
  if (doc.sections.size() > 2) {
    w.Raw("<nav class=\"toc\" aria-label=\"Sections\"><ol>\n");
    for (const Section& s : doc.sections) {
      w.Raw("<li><a href=\"#");
      w.Text(s.id);
      w.Raw("\">");
      w.Text(s.title);
      w.Raw("</a></li>\n");
    }
    w.Raw("</ol></nav>\n");
  }
  for (const Section& s : doc.sections) {
    w.Raw("<section aria-labelledby=\"");
    w.Text(s.id);
    w.Raw("\">\n<h2 id=\"");
    w.Text(s.id);
    w.Raw("\">");
    w.Text(s.title);
    w.Raw("</h2>\n");
    for (const Block& b : s.blocks) blocks.Block(b);
    w.Raw("</section>\n");
  }
  w.Raw(
      "</main>\n<footer><p>Served by hubwatch from its own store; numbers from each revision's "
      "config.json and safetensors headers, no weights read.</p></footer>\n</body>\n</html>\n");
  return out;
}

}  // namespace hubwatch::page
