// Document -> HTML5. Accessible by construction: lang, one h1, h2 per section and h3/h4 inside,
// th scope, a caption on every table, chips that say their impact in words.

#include <algorithm>
#include <string>
#include <string_view>

#include "daemon/page/chart_svg.h"
#include "daemon/page/escape.h"
#include "daemon/page/href.h"
#include "daemon/page/render.h"

namespace hubwatch::page {
namespace {

const char* ToneClass(Tone t) {
  switch (t) {
    case Tone::kCosmetic:
      return "cosmetic";
    case Tone::kBehavioral:
      return "behavioral";
    case Tone::kBreaking:
      return "breaking";
    case Tone::kGood:
      return "good";
    case Tone::kWarn:
      return "warn";
    case Tone::kBad:
      return "bad";
    case Tone::kNone:
      break;
  }
  return "none";
}

class HtmlWriter {
 public:
  explicit HtmlWriter(std::string& out) : out_(out) {}

  void Raw(std::string_view s) { out_ += s; }
  void Text(std::string_view s) { AppendHtml(out_, s); }

  void Spans(const page::Spans& spans) {
    for (const Span& s : spans) SpanOut(s);
  }

  void SpanOut(const Span& s) {
    switch (s.kind) {
      case Span::Kind::kText:
        Text(s.text);
        return;
      case Span::Kind::kStrong:
        Wrap("strong", s.text);
        return;
      case Span::Kind::kCode:
        Wrap("code", s.text);
        return;
      case Span::Kind::kLink:
        if (!IsSafeHref(s.href)) return Text(s.text);
        Raw("<a href=\"");
        Text(s.href);
        Raw("\">");
        Text(s.text);
        Raw("</a>");
        return;
      case Span::Kind::kChip:
        Raw("<span class=\"chip ");
        Raw(ToneClass(s.tone));
        Raw("\">");
        Text(s.text);
        Raw("</span>");
        return;
    }
  }

  void Block(const page::Block& b) {
    std::visit([this](const auto& v) { Out(v); }, b);
  }

 private:
  void Wrap(const char* tag, std::string_view text) {
    Raw("<");
    Raw(tag);
    Raw(">");
    Text(text);
    Raw("</");
    Raw(tag);
    Raw(">");
  }

  void OpenFold(const std::string& folded) {
    if (folded.empty()) return;
    Raw("<details><summary>");
    Text(folded);
    Raw("</summary>\n");
  }
  void CloseFold(const std::string& folded) {
    if (!folded.empty()) Raw("</details>\n");
  }

  void Out(const Paragraph& p) {
    Raw("<p>");
    Spans(p.spans);
    Raw("</p>\n");
  }

  void Out(const Tiles& t) {
    Raw("<dl class=\"tiles\">\n");
    for (const Tile& tile : t.tiles) {
      Raw("<div class=\"tile ");
      Raw(ToneClass(tile.tone));
      Raw("\"><dt>");
      Text(tile.label);
      Raw("</dt><dd class=\"value\">");
      Text(tile.value);
      Raw("</dd>");
      if (!tile.note.empty()) {
        Raw("<dd class=\"note\">");
        Text(tile.note);
        Raw("</dd>");
      }
      Raw("</div>\n");
    }
    Raw("</dl>\n");
  }

  void Out(const Table& t) {
    OpenFold(t.folded);
    Raw("<div class=\"scroll\"><table>\n<caption>");
    Text(t.caption);
    Raw("</caption>\n<thead><tr>");
    for (size_t c = 0; c < t.header.size(); ++c) {
      Raw(Numeric(t, c) ? "<th scope=\"col\" class=\"num\">" : "<th scope=\"col\">");
      Text(t.header[c]);
      Raw("</th>");
    }
    Raw("</tr></thead>\n<tbody>\n");
    for (const auto& row : t.rows) {
      Raw("<tr>");
      for (size_t c = 0; c < row.size(); ++c) {
        const bool head = c == 0 && t.row_headers;
        if (head) {
          Raw("<th scope=\"row\">");
        } else {
          Raw(Numeric(t, c) ? "<td class=\"num\">" : "<td>");
        }
        Spans(row[c]);
        Raw(head ? "</th>" : "</td>");
      }
      Raw("</tr>\n");
    }
    Raw("</tbody>\n</table></div>\n");
    CloseFold(t.folded);
  }

  static bool Numeric(const Table& t, size_t c) { return c < t.numeric.size() && t.numeric[c]; }

  void Out(const Preformatted& p) {
    OpenFold(p.folded);
    Raw("<pre><code>");
    Text(p.text);
    Raw("</code></pre>\n");
    CloseFold(p.folded);
  }

  void Out(const Image& i) {
    if (!IsSafeHref(i.src)) return;
    Raw("<p><img src=\"");
    Text(i.src);
    Raw("\" alt=\"");
    Text(i.alt);
    Raw("\"></p>\n");
  }

  void Out(const Heading& h) {
    const char level = h.level == 4 ? '4' : '3';
    Raw("<h");
    out_ += level;
    if (!h.id.empty()) {
      Raw(" id=\"");
      Text(h.id);
      Raw("\"");
    }
    Raw(">");
    Spans(h.spans);
    Raw("</h");
    out_ += level;
    Raw(">\n");
  }

  void Out(const BulletList& l) {
    Raw("<ul>\n");
    for (const page::Spans& item : l.items) {
      Raw("<li>");
      Spans(item);
      Raw("</li>\n");
    }
    Raw("</ul>\n");
  }

  // A text input named `name`; its id is the name with dots as dashes ("train-optimizer").
  void Field(std::string_view name, const char* label, const std::string& value,
             const char* hint) {
    std::string id(name);
    std::replace(id.begin(), id.end(), '.', '-');
    Raw("<p class=\"field\"><label for=\"");
    Raw(id);
    Raw("\">");
    Raw(label);
    Raw("</label> <input type=\"text\" inputmode=\"");
    Raw(name == "cards" || id != name ? "text" : "numeric");
    Raw("\" id=\"");
    Raw(id);
    Raw("\" name=\"");
    Raw(name);
    Raw("\" value=\"");
    Text(value);
    Raw("\" placeholder=\"");
    Raw(hint);
    Raw("\"></p>\n");
  }

  void Out(const PlanForm& f) {
    if (!IsSafeHref(f.action)) return;
    Raw("<form method=\"post\" action=\"");
    Text(f.action);
    Raw("\" class=\"plan\">\n");
    if (!f.error.empty()) {
      Raw("<p class=\"error\" id=\"plan-error\" role=\"alert\"><strong>Not estimated:</strong> ");
      Text(f.error);
      Raw("</p>\n");
    }
    Raw("<p class=\"field wide\"><label for=\"config\">config.json or safetensors header</label>\n<textarea "
        "id=\"config\" "
        "name=\"config\" rows=\"14\" cols=\"80\" spellcheck=\"false\" required");
    if (!f.error.empty()) Raw(" aria-describedby=\"plan-error\"");
    Raw(">\n");
    Text(f.config);
    Raw("</textarea></p>\n<div class=\"knobs\">\n");
    Field("seq", "Sequence length", f.seq, "2048");
    Field("batch", "Batch", f.batch, "1");
    Field("context", "Serving context", f.context, "4096");
    Field("lora_rank", "LoRA rank", f.lora_rank, "16");
    Field("cards", "Cards", f.cards, "a100-80gb,h100");
    Field("train.optimizer", "Optimizer", f.optimizer, "adamw");
    Field("train.checkpointing", "Checkpointing", f.checkpointing, "none");
    Field("runtime.metric", "Memory counted", f.metric, "card");
    Raw("</div>\n<p><button type=\"submit\">Estimate</button></p>\n</form>\n");
  }

  void Out(const BarChart& c) { Raw(BarChartSvg(c)); }
  void Out(const DotStrip& d) { Raw(DotStripSvg(d)); }

  void Out(const FilterForm& f) {
    if (!IsSafeHref(f.action)) return;
    Raw("<form method=\"get\" action=\"");
    Text(f.action);
    Raw("\" class=\"filters\">\n<div class=\"knobs\">\n");
    for (const FilterForm::Field& field : f.fields) {
      Raw("<p class=\"field\"><label for=\"f-");
      Text(field.name);
      Raw("\">");
      Text(field.label);
      Raw("</label> ");
      if (field.choices.empty()) {
        Raw("<input type=\"text\" id=\"f-");
        Text(field.name);
        Raw("\" name=\"");
        Text(field.name);
        Raw("\" value=\"");
        Text(field.value);
        Raw("\" placeholder=\"");
        Text(field.hint);
        Raw("\"></p>\n");
        continue;
      }
      Raw("<select id=\"f-");
      Text(field.name);
      Raw("\" name=\"");
      Text(field.name);
      Raw("\"><option value=\"\">any</option>");
      for (const std::string& choice : field.choices) {
        Raw("<option");
        if (choice == field.value) Raw(" selected");
        Raw(">");
        Text(choice);
        Raw("</option>");
      }
      Raw("</select></p>\n");
    }
    Raw("</div>\n<p><button type=\"submit\">Filter</button></p>\n</form>\n");
  }

  std::string& out_;
};

}  // namespace

std::string RenderHtml(const Document& doc) {
  std::string out;
  out.reserve(64 * 1024);
  HtmlWriter w(out);
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
  for (const Block& b : doc.lead) w.Block(b);
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
    for (const Block& b : s.blocks) w.Block(b);
    w.Raw("</section>\n");
  }
  w.Raw(
      "</main>\n<footer><p>Served by hubwatch from its own store; numbers from each revision's "
      "config.json and safetensors headers, no weights read.</p></footer>\n</body>\n</html>\n");
  return out;
}

}  // namespace hubwatch::page
