#pragma once

// The charts of document.h as inline SVG figures. Every text is escaped; colours are classes the
// stylesheet defines (.seg0 ... .seg7, .tone-*, .band, .dot), so a figure follows dark mode and
// print.
// Pure functions; thread-safe.
//
// BarChart: one row per bar, its stacked segments scaled to the largest bar or mark, each mark
// a labelled dashed line, a legend below. DotStrip: one row per label, a dot per value on a
// shared axis (values beyond it pinned to its ends), the band shaded, ticks every band width.

#include <string>

#include "daemon/page/document.h"

namespace hubwatch::page {

// `<figure>` with the SVG and its caption; empty when the chart has no bar.
std::string BarChartSvg(const BarChart& chart);
std::string DotStripSvg(const DotStrip& strip);

}  // namespace hubwatch::page
