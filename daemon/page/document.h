#pragma once

// Document: a page as data - a title, a lead and sections of paragraphs, tiles, tables, code and
// images - rendered twice, as HTML (render_html.h) and as its Markdown twin
// (render_markdown.h), so the two never drift apart. Every string is plain text, never markup:
// the renderers escape it for where it goes. Links carry hrefs made by href.h only. Plain value
// types.

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace hubwatch::page {

// What a chip or a tile says besides its text (impact is never shown by colour alone: the text
// always says it too).
enum class Tone { kNone, kCosmetic, kBehavioral, kBreaking, kGood, kWarn, kBad };

struct Span {
  enum class Kind { kText, kStrong, kCode, kLink, kChip };
  Kind kind = Kind::kText;
  std::string text;
  std::string href;  // kLink: from href.h
  Tone tone = Tone::kNone;
};
using Spans = std::vector<Span>;

inline Span Text(std::string t) { return {Span::Kind::kText, std::move(t), {}, Tone::kNone}; }
inline Span Strong(std::string t) { return {Span::Kind::kStrong, std::move(t), {}, Tone::kNone}; }
inline Span Code(std::string t) { return {Span::Kind::kCode, std::move(t), {}, Tone::kNone}; }
inline Span Link(std::string t, std::string href) {
  return {Span::Kind::kLink, std::move(t), std::move(href), Tone::kNone};
}
inline Span Chip(std::string t, Tone tone) { return {Span::Kind::kChip, std::move(t), {}, tone}; }

struct Paragraph {
  Spans spans;
};

struct Tile {
  std::string label;
  std::string value;
  std::string note;
  Tone tone = Tone::kNone;
};
struct Tiles {
  std::vector<Tile> tiles;
};

struct Table {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<Spans>> rows;
  std::vector<bool> numeric;  // right-aligned columns (may be shorter than header)
  bool row_headers = false;   // the first cell of each row heads it
  std::string folded;         // not empty: folded (<details>) behind this summary
};

struct Preformatted {
  std::string text;
  std::string folded;  // as Table::folded
};

struct Image {
  std::string src;  // from href.h
  std::string alt;
};

// A heading inside a section (level 3 or 4), with an anchor id ([a-z0-9-] only).
struct Heading {
  int level = 3;
  Spans spans;
  std::string id;
};

struct BulletList {
  std::vector<Spans> items;
};

// The paste-a-config form of /plan (HTML only; the Markdown twin says where it is).
struct PlanForm {
  std::string action;  // from href.h
  std::string config;  // the text kept after a failed post
  std::string seq, batch, context, lora_rank, cards;
  std::string optimizer, checkpointing, metric;  // train.optimizer, train.checkpointing,
                                                 // runtime.metric
  std::string error;  // the estimator's reason, shown next to the form
};

// A form of filters that reloads the page with them as its query (GET; works without
// JavaScript). HTML only; the Markdown twin lists the query parameters.
struct FilterForm {
  struct Field {
    std::string name;                  // the query parameter, [a-z_] only
    std::string label;
    std::string value;                 // as asked
    std::vector<std::string> choices;  // a select of "" (any) and these; empty: a text input
    std::string hint;                  // a text input's placeholder
  };
  std::string action;  // from href.h
  std::vector<Field> fields;
};

// Horizontal bars, each stacked from categories, against marked values (a card's memory): the
// HTML draws an SVG figure (no script; colours from the stylesheet, so dark mode and print
// follow), the Markdown twin a table of the same numbers.
struct BarChart {
  std::string caption;
  std::string unit;                     // of every value: "GB"
  std::vector<std::string> categories;  // the legend, in stacking order (at most 8 colours)
  std::vector<Tone> tones;              // per category, a meaning's colour; empty: the palette
  struct Bar {
    std::string label;
    std::vector<double> values;  // one per category, >= 0
  };
  std::vector<Bar> bars;
  struct Mark {
    std::string label;
    double value = 0;
  };
  std::vector<Mark> marks;  // vertical lines across every bar
};

// Rows of dots along one axis (an error in percent), with a shaded band around 0: HTML draws an
// SVG figure, the Markdown twin says the band and each row's count inside it (the dots' numbers
// are in a table beside it on every page that draws one).
struct DotStrip {
  std::string caption;
  std::string unit;  // of the axis: "%"
  double min = -50, max = 50;
  double band = 10;  // +- shaded around 0; 0: none
  struct Dot {
    double value = 0;
    std::string title;  // what the dot is (shown on hover)
  };
  struct Row {
    std::string label;
    std::vector<Dot> dots;
  };
  std::vector<Row> rows;
};

using Block = std::variant<Paragraph, Tiles, Table, Preformatted, Image, Heading, BulletList,
                           PlanForm, FilterForm, BarChart, DotStrip>;

struct Section {
  std::string id;  // anchor, [a-z0-9-] only
  std::string title;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;  // <title>
  std::string h1;
  std::vector<Span> breadcrumb;
  std::vector<Block> lead;  // under the h1
  std::vector<Section> sections;
  std::vector<std::pair<std::string, std::string>> alternates;  // (type, href): the twin, JSON
};

}  // namespace hubwatch::page
