// Document -> Markdown (CommonMark + GFM tables): the twin of render_html.cc. Text is escaped so
// that nothing upstream wrote becomes markup (entities for < > & and quotes, a backslash before
// Markdown's own characters); code blocks are fenced with more backticks than they hold.

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "daemon/page/escape.h"
#include "daemon/page/href.h"
#include "daemon/page/render.h"

namespace hubwatch::page {
namespace {

class MarkdownWriter {
 public:
  explicit MarkdownWriter(std::string& out) : out_(out) {}

  void Text(std::string_view s) { AppendMarkdown(out_, s); }

  void Spans(const page::Spans& spans) {
    for (const Span& s : spans) SpanOut(s);
  }

  void Block(const page::Block& b) {
    std::visit([this](const auto& v) { Out(v); }, b);
  }

 private:
  void SpanOut(const Span& s) {
    switch (s.kind) {
      case Span::Kind::kText:
        return Text(s.text);
      case Span::Kind::kStrong:
        out_ += "**";
        Text(s.text);
        out_ += "**";
        return;
      case Span::Kind::kCode: {
        // Inline code cannot escape; a backtick run longer than any inside it delimits it.
        const std::string clean = CleanText(s.text);
        std::string one_line = clean;
        std::replace(one_line.begin(), one_line.end(), '\n', ' ');
        std::replace(one_line.begin(), one_line.end(), '|', '/');  // tables split on |
        const std::string ticks(LongestRun(one_line, '`') + 1, '`');
        out_ += ticks + " " + one_line + " " + ticks;
        return;
      }
      case Span::Kind::kLink:
        if (!IsSafeHref(s.href)) return Text(s.text);
        out_ += '[';
        Text(s.text);
        out_ += "](";
        out_ += s.href;  // IsSafeHref: no space, parenthesis or angle bracket
        out_ += ')';
        return;
      case Span::Kind::kChip:
        out_ += "**\\[";
        Text(s.text);
        out_ += "\\]** ";
        return;
    }
  }

  void Out(const Paragraph& p) {
    Spans(p.spans);
    out_ += "\n\n";
  }

  void Out(const Tiles& t) {
    for (const Tile& tile : t.tiles) {
      out_ += "- ";
      Text(tile.label);
      out_ += ": **";
      Text(tile.value);
      out_ += "**";
      if (!tile.note.empty()) {
        out_ += " (";
        Text(tile.note);
        out_ += ")";
      }
      out_ += "\n";
    }
    out_ += "\n";
  }

  void Out(const Table& t) {
    if (!t.folded.empty()) {
      out_ += "*";
      Text(t.folded);
      out_ += ":*\n\n";
    }
    out_ += "*";
    Text(t.caption);
    out_ += "*\n\n|";
    for (const std::string& h : t.header) {
      out_ += " ";
      Text(h);
      out_ += " |";
    }
    out_ += "\n|";
    for (size_t c = 0; c < t.header.size(); ++c) {
      out_ += c < t.numeric.size() && t.numeric[c] ? " ---: |" : " --- |";
    }
    out_ += "\n";
    for (const auto& row : t.rows) {
      out_ += "|";
      for (const page::Spans& cell : row) {
        out_ += " ";
        Spans(cell);
        out_ += " |";
      }
      out_ += "\n";
    }
    out_ += "\n";
  }

  void Out(const Preformatted& p) {
    if (!p.folded.empty()) {
      out_ += "*";
      Text(p.folded);
      out_ += ":*\n\n";
    }
    const std::string clean = CleanText(p.text);
    const std::string fence(std::max<size_t>(3, LongestRun(clean, '`') + 1), '`');
    out_ += fence + "\n" + clean;
    if (!clean.empty() && clean.back() != '\n') out_ += "\n";
    out_ += fence + "\n\n";
  }

  void Out(const Image& i) {
    if (!IsSafeHref(i.src)) return;
    out_ += "![";
    Text(i.alt);
    out_ += "](" + i.src + ")\n\n";
  }

  void Out(const Heading& h) {
    out_ += h.level == 4 ? "#### " : "### ";
    Spans(h.spans);
    out_ += "\n\n";
  }

  void Out(const BulletList& l) {
    for (const page::Spans& item : l.items) {
      out_ += "- ";
      Spans(item);
      out_ += "\n";
    }
    out_ += "\n";
  }

  void Out(const PlanForm& f) {
    if (!f.error.empty()) {
      out_ += "Not estimated: ";
      Text(f.error);
      out_ += "\n\n";
    }
    out_ += "Paste a config.json into the form at /plan, or POST it to /api/v1/plan.\n\n";
  }

  // The chart's numbers as a table: a row per bar, a column per category, then the total; the
  // marks after it.
  void Out(const BarChart& c) {
    Table t{c.caption + " (" + c.unit + ")", {""}, {}, {false}, true, {}};
    for (const std::string& category : c.categories) {
      t.header.push_back(category);
      t.numeric.push_back(true);
    }
    t.header.push_back("total");
    t.numeric.push_back(true);
    char buf[32];
    auto number = [&](double v) {
      std::snprintf(buf, sizeof buf, "%.1f", v);
      return std::string(buf);
    };
    for (const BarChart::Bar& b : c.bars) {
      std::vector<page::Spans> row = {{page::Text(b.label)}};
      double total = 0;
      for (size_t i = 0; i < c.categories.size(); ++i) {
        const double v = i < b.values.size() ? b.values[i] : 0;
        total += v;
        row.push_back({page::Text(v > 0 ? number(v) : "")});
      }
      row.push_back({page::Strong(number(total))});
      t.rows.push_back(std::move(row));
    }
    Out(t);
    if (c.marks.empty()) return;
    std::string marks;
    for (const BarChart::Mark& m : c.marks) {
      marks += (marks.empty() ? "" : ", ") + m.label + " " + number(m.value) + " " + c.unit;
    }
    out_ += "Against: ";
    Text(marks);
    out_ += ".\n\n";
  }

  // The strip in words: per row, how many of its dots lie inside the band.
  void Out(const DotStrip& d) {
    out_ += "*";
    Text(d.caption);
    out_ += ":*\n\n";
    for (const DotStrip::Row& row : d.rows) {
      size_t inside = 0;
      for (const DotStrip::Dot& dot : row.dots) inside += std::fabs(dot.value) <= d.band ? 1 : 0;
      out_ += "- ";
      Text(row.label + ": " + std::to_string(inside) + " of " + std::to_string(row.dots.size()) +
           " within ±" + std::to_string(static_cast<int>(d.band)) + d.unit);
      out_ += "\n";
    }
    out_ += "\n";
  }

  void Out(const FilterForm& f) {
    std::string params;
    for (const FilterForm::Field& field : f.fields) {
      params += (params.empty() ? "?" : ", ?") + field.name + "=";
    }
    out_ += "Filter with ";
    Text(params);
    out_ += ".\n\n";
  }

  std::string& out_;
};

}  // namespace

std::string RenderMarkdown(const Document& doc) {
  std::string out;
  out.reserve(48 * 1024);
  MarkdownWriter w(out);
  if (!doc.breadcrumb.empty()) {
    w.Spans(doc.breadcrumb);
    out += "\n\n";
  }
  out += "# ";
  w.Text(doc.h1);
  out += "\n\n";
  for (const Block& b : doc.lead) w.Block(b);
  for (const Section& s : doc.sections) {
    out += "## ";
    w.Text(s.title);
    out += "\n\n";
    for (const Block& b : s.blocks) w.Block(b);
  }
  return out;
}

}  // namespace hubwatch::page
