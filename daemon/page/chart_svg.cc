#include "daemon/page/chart_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "daemon/page/escape.h"

namespace hubwatch::page {
namespace {

// kRight: room for the longest bar's total beside it.
constexpr double kWidth = 640, kLabelWidth = 150, kRight = 64, kRow = 26, kBarHeight = 16;
constexpr double kTop = 34;  // room for the marks' labels
constexpr size_t kColours = 8;

std::string N(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Value(double v, const std::string& unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, v >= 100 || v == std::floor(v) ? "%.0f %s" : "%.1f %s", v,
                unit.c_str());
  return buf;
}

// A segment's colour: its category's tone when the chart gives tones, else the palette's.
std::string SegmentClass(const BarChart& chart, size_t category) {
  if (category < chart.tones.size()) {
    switch (chart.tones[category]) {
      case Tone::kBreaking:
      case Tone::kBad:
        return "tone-bad";
      case Tone::kBehavioral:
      case Tone::kWarn:
        return "tone-warn";
      case Tone::kGood:
        return "tone-good";
      default:
        return "tone-muted";
    }
  }
  return "seg" + std::to_string(category % kColours);
}

}  // namespace

std::string BarChartSvg(const BarChart& chart) {
  if (chart.bars.empty()) return "";
  double scale_max = 0;
  for (const BarChart::Bar& b : chart.bars) {
    double total = 0;
    for (double v : b.values) total += std::max(0.0, v);
    scale_max = std::max(scale_max, total);
  }
  for (const BarChart::Mark& m : chart.marks) scale_max = std::max(scale_max, m.value);
  if (!(scale_max > 0) || !std::isfinite(scale_max)) return "";
  const double span = kWidth - kLabelWidth - kRight;
  const double top = chart.marks.empty() ? 8 : kTop;
  auto x_of = [&](double v) { return kLabelWidth + span * std::min(v, scale_max) / scale_max; };
  const size_t legend_rows = (chart.categories.size() + 3) / 4;
  const double height = top + kRow * static_cast<double>(chart.bars.size()) + 8 +
                        18 * static_cast<double>(legend_rows);

  std::string o = "<figure class=\"chart\">\n<svg viewBox=\"0 0 " + N(kWidth) + " " + N(height) +
                  "\" role=\"img\" aria-label=\"";
  AppendHtml(o, chart.caption);
  o += "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  // Marks: a dashed line across the bars, its label above, alternating rows so neighbours don't
  // collide.
  size_t nth = 0;
  for (const BarChart::Mark& m : chart.marks) {
    if (!(m.value > 0)) continue;
    const std::string x = N(x_of(m.value));
    o += "<line class=\"mark\" x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + N(top - 4) + "\" y2=\"" +
         N(top + kRow * static_cast<double>(chart.bars.size())) + "\"/>";
    o += "<text class=\"mark\" x=\"" + x + "\" y=\"" + N(nth++ % 2 ? 24 : 12) +
         "\" text-anchor=\"middle\">";
    AppendHtml(o, m.label);
    o += "</text>\n";
  }
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const BarChart::Bar& b = chart.bars[i];
    const double y = top + kRow * static_cast<double>(i);
    o += "<text class=\"label\" x=\"" + N(kLabelWidth - 6) + "\" y=\"" + N(y + kBarHeight - 4) +
         "\" text-anchor=\"end\">";
    AppendHtml(o, b.label);
    o += "</text>";
    double at = 0;
    for (size_t c = 0; c < b.values.size() && c < chart.categories.size(); ++c) {
      const double v = std::max(0.0, b.values[c]);
      if (!(v > 0)) continue;
      const double x0 = x_of(at), x1 = x_of(at + v);
      at += v;
      o += "<rect class=\"" + SegmentClass(chart, c) + "\" x=\"" + N(x0) + "\" y=\"" + N(y) +
           "\" width=\"" + N(std::max(0.5, x1 - x0)) + "\" height=\"" + N(kBarHeight) +
           "\"><title>";
      AppendHtml(o, chart.categories[c] + ": " + Value(v, chart.unit));
      o += "</title></rect>";
    }
    o += "<text class=\"value\" x=\"" + N(x_of(at) + 4) + "\" y=\"" + N(y + kBarHeight - 4) + "\">";
    AppendHtml(o, Value(at, chart.unit));
    o += "</text>\n";
  }
  // The legend, four to a row.
  const double legend_top = top + kRow * static_cast<double>(chart.bars.size()) + 8;
  for (size_t c = 0; c < chart.categories.size(); ++c) {
    const double x = kLabelWidth + span / 4 * static_cast<double>(c % 4);
    const double y = legend_top + 18 * static_cast<double>(c / 4);
    o += "<rect class=\"" + SegmentClass(chart, c) + "\" x=\"" + N(x) + "\" y=\"" + N(y) +
         "\" width=\"10\" height=\"10\"/><text class=\"legend\" x=\"" + N(x + 14) + "\" y=\"" +
         N(y + 9) + "\">";
    AppendHtml(o, chart.categories[c]);
    o += "</text>";
  }
  o += "\n</svg>\n<figcaption>";
  AppendHtml(o, chart.caption);
  o += "</figcaption>\n</figure>\n";
  return o;
}

std::string DotStripSvg(const DotStrip& strip) {
  if (strip.rows.empty() || !(strip.max > strip.min)) return "";
  constexpr double kStripRight = 16;
  const double span = kWidth - kLabelWidth - kStripRight;
  auto x_of = [&](double v) {
    const double c = std::isfinite(v) ? std::clamp(v, strip.min, strip.max) : strip.max;
    return kLabelWidth + span * (c - strip.min) / (strip.max - strip.min);
  };
  const double bottom = kTop + kRow * static_cast<double>(strip.rows.size());
  std::string o = "<figure class=\"chart\">\n<svg viewBox=\"0 0 " + N(kWidth) + " " +
                  N(bottom + 8) + "\" role=\"img\" aria-label=\"";
  AppendHtml(o, strip.caption);
  o += "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  if (strip.band > 0) {
    o += "<rect class=\"band\" x=\"" + N(x_of(-strip.band)) + "\" y=\"" + N(kTop - 6) +
         "\" width=\"" + N(x_of(strip.band) - x_of(-strip.band)) + "\" height=\"" +
         N(bottom - kTop + 6) + "\"/>\n";
  }
  // Ticks every band width (else every tenth of the axis), labelled above.
  const double step = strip.band > 0 ? strip.band : (strip.max - strip.min) / 10;
  for (double t = std::ceil(strip.min / step) * step; t <= strip.max + 1e-9; t += step) {
    const std::string x = N(x_of(t));
    o += "<line class=\"" + std::string(std::fabs(t) < 1e-9 ? "zero" : "tick") + "\" x1=\"" + x +
         "\" x2=\"" + x + "\" y1=\"" + N(kTop - 6) + "\" y2=\"" + N(bottom) + "\"/>";
    char label[32];
    std::snprintf(label, sizeof label, "%+.0f%s", t, strip.unit.c_str());
    o += "<text class=\"mark\" x=\"" + x + "\" y=\"" + N(kTop - 12) + "\" text-anchor=\"middle\">";
    AppendHtml(o, std::fabs(t) < 1e-9 ? "0" : label);
    o += "</text>";
  }
  o += "\n";
  for (size_t i = 0; i < strip.rows.size(); ++i) {
    const DotStrip::Row& row = strip.rows[i];
    const double y = kTop + kRow * static_cast<double>(i) + kBarHeight / 2;
    o += "<text class=\"label\" x=\"" + N(kLabelWidth - 6) + "\" y=\"" + N(y + 4) +
         "\" text-anchor=\"end\">";
    AppendHtml(o, row.label);
    o += "</text>";
    for (const DotStrip::Dot& d : row.dots) {
      o += "<circle class=\"dot\" cx=\"" + N(x_of(d.value)) + "\" cy=\"" + N(y) +
           "\" r=\"4\"><title>";
      AppendHtml(o, d.title);
      o += "</title></circle>";
    }
    o += "\n";
  }
  o += "</svg>\n<figcaption>";
  AppendHtml(o, strip.caption);
  o += "</figcaption>\n</figure>\n";
  return o;
}

}  // namespace hubwatch::page
