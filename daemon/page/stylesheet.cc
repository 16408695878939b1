#include "daemon/page/stylesheet.h"

namespace hubwatch::page {

std::string_view Stylesheet() {
  static constexpr std::string_view kCss = R"css(:root {
  --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --panel: #f6f8fa;
  --link: #0550ae; --good: #1a7f37; --warn: #9a6700; --bad: #cf222e; --code: #eff1f3;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #30363d; --panel: #161b22;
    --link: #4493f8; --good: #3fb950; --warn: #d29922; --bad: #f85149; --code: #1f242c;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--fg); line-height: 1.5;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--link); }
header.site, main, footer { max-width: 72rem; margin: 0 auto; padding: 0.5rem 1rem; }
header.site { display: flex; flex-wrap: wrap; gap: 1rem; align-items: baseline;
  border-bottom: 1px solid var(--line); }
header.site > a { font-weight: 700; text-decoration: none; }
header.site nav a { margin-right: 0.75rem; }
footer { color: var(--muted); font-size: 0.875rem; border-top: 1px solid var(--line); }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0.5rem 0; overflow-wrap: anywhere; }
h2 { font-size: 1.35rem; margin-top: 2rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1rem; margin-bottom: 0.25rem; overflow-wrap: anywhere; }
h4 { font-size: 1rem; margin-bottom: 0.25rem; }
.crumbs { color: var(--muted); font-size: 0.9rem; }
.toc ol { columns: 2 16rem; padding-left: 1.25rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 0.875rem; }
code { background: var(--code); padding: 0 0.2em; border-radius: 3px; overflow-wrap: anywhere; }
pre { background: var(--code); padding: 0.75rem; overflow-x: auto; border-radius: 6px; }
pre code { padding: 0; background: none; overflow-wrap: normal; }
.scroll { overflow-x: auto; margin: 0.5rem 0 1rem; }
table { border-collapse: collapse; font-size: 0.9rem; min-width: 50%; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; caption-side: top; }
th, td { border: 1px solid var(--line); padding: 0.3rem 0.5rem; text-align: left;
  vertical-align: top; }
thead th { background: var(--panel); }
tbody th { font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr));
  gap: 0.75rem; margin: 1rem 0; }
.tile { border: 1px solid var(--line); border-radius: 8px; padding: 0.6rem 0.8rem;
  background: var(--panel); }
.tile dt { color: var(--muted); font-size: 0.85rem; }
.tile dd { margin: 0; }
.tile .value { font-size: 1.35rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.tile .note { color: var(--muted); font-size: 0.8rem; }
.tile.good { border-left: 4px solid var(--good); }
.tile.warn { border-left: 4px solid var(--warn); }
.tile.bad { border-left: 4px solid var(--bad); }
.chip { display: inline-block; border: 1px solid currentColor; border-radius: 999px;
  padding: 0 0.5em; font-size: 0.8rem; font-weight: 600; margin-right: 0.25em; }
.chip.cosmetic, .chip.none { color: var(--muted); }
.chip.behavioral, .chip.warn { color: var(--warn); }
.chip.breaking, .chip.bad { color: var(--bad); }
.chip.good { color: var(--good); }
details { margin: 0.5rem 0; }
summary { cursor: pointer; color: var(--link); }
form.plan textarea { width: 100%; font-family: ui-monospace, Menlo, Consolas, monospace;
  background: var(--bg); color: var(--fg); border: 1px solid var(--line); }
form.plan .knobs { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; }
form.plan input { background: var(--bg); color: var(--fg); border: 1px solid var(--line);
  padding: 0.2rem 0.4rem; max-width: 12rem; }
form.plan label { display: block; font-weight: 600; }
form.plan button { font-size: 1rem; padding: 0.4rem 1.2rem; }
.error { border-left: 4px solid var(--bad); padding: 0.5rem 0.75rem; background: var(--panel); }
img { max-width: 100%; }
figure.chart { margin: 1rem 0; }
figure.chart svg { width: 100%; height: auto; max-width: 48rem; display: block; }
figure.chart figcaption { color: var(--muted); font-size: 0.875rem; }
svg text { fill: var(--fg); font-size: 11px; font-family: inherit; }
svg text.mark, svg text.legend { fill: var(--muted); }
svg line.mark { stroke: var(--muted); stroke-dasharray: 3 3; }
.seg0 { fill: #4e79a7; } .seg1 { fill: #f28e2b; } .seg2 { fill: #59a14f; }
.seg3 { fill: #b07aa1; } .seg4 { fill: #e15759; } .seg5 { fill: #76b7b2; }
.seg6 { fill: #edc948; } .seg7 { fill: #9c755f; }
svg rect.tone-bad { fill: var(--bad); } svg rect.tone-warn { fill: var(--warn); }
svg rect.tone-good { fill: var(--good); } svg rect.tone-muted { fill: var(--muted); }
svg rect.band { fill: var(--good); fill-opacity: 0.15; }
svg line.tick { stroke: var(--line); } svg line.zero { stroke: var(--muted); }
svg circle.dot { fill: var(--link); fill-opacity: 0.7; }
@media print {
  header.site nav, .toc, form.plan { display: none; }
  body { background: #fff; color: #000; font-size: 10pt; }
  a { color: #000; }
  details > *:not(summary) { display: block; }
  .scroll { overflow: visible; }
  pre { white-space: pre-wrap; }
  svg text { fill: #000; }
  h2, h3 { break-after: avoid; }
  tr { break-inside: avoid; }
}
)css";
  return kCss;
}

}  // namespace hubwatch::page
