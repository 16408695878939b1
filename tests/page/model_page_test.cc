// The model page of google/gemma-2-9b-it from the fixture store: every figure the issue names,
// the sections in order, every stored revision, and the Markdown twin in the same order.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "daemon/page/calibration_page.h"
#include "daemon/page/chart_svg.h"
#include "daemon/page/render.h"
#include "daemon/page/sections.h"
#include "estimator/format.h"
#include "tests/page/page_env.h"
#include "tests/page/page_fixture.h"

namespace hubwatch::page::testing {
namespace {

class ModelPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(PageDb());
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(s).value();
  }
  std::unique_ptr<store::Store> store_;
};

// Positions of `needles` in `text`, each after the previous one; -1 where missing.
void ExpectInOrder(const std::string& text, const std::vector<std::string>& needles) {
  size_t at = 0;
  for (const std::string& n : needles) {
    const size_t found = text.find(n, at);
    ASSERT_NE(found, std::string::npos) << "missing, or out of order: " << n;
    at = found + n.size();
  }
}

const std::vector<std::string> kSectionTitles = {
    "What changed upstream",           "Our count against the checkpoint",
    "What it costs to run",            "Memory: what fits on which card",
    "Structure",                       "What the verifier says",
    "Do this to your own model"};

// The page is led by change: the latest change that matters, then each pin's standing, before
// the history and the estimate.
TEST_F(ModelPageTest, ThePageLeadsWithTheLatestChangeAndThePins) {
  auto record = store_->repos().GetRepo(kMistral);
  ASSERT_TRUE(record.ok() && record->has_value());
  auto history = LoadHistory(*store_, kMistral, 200);
  ASSERT_TRUE(history.ok() && history->size() >= 2);
  store::RepoRecord pinned = **record;
  pinned.pins = {history->back().revision.sha.substr(0, 7), history->front().revision.sha};
  ASSERT_TRUE(store_->repos().AddRepo(pinned).ok());
  BuiltPage p = BuildPage(*store_, kMistral);
  const std::string html = RenderHtml(p.doc);
  const std::string md = RenderMarkdown(p.doc);
  auto pins = store::PinStatuses(*store_, pinned);
  ASSERT_TRUE(pins.ok() && pins->size() == 2);
  ASSERT_GT((*pins)[0].advisories, 0);
  for (const std::string& text : {html, md}) {
    ExpectInOrder(text, {"Latest change: ", "Pin ", history->back().revision.sha.substr(0, 7),
                         std::to_string((*pins)[0].advisories) + " advisor",
                         history->front().revision.sha.substr(0, 7) + " takes every fix", "Pin ",
                         "current", "What changed upstream", "Our count against the checkpoint"});
  }
}

TEST_F(ModelPageTest, GemmaShowsTheIssuesFiguresInOrder) {
  BuiltPage p = BuildPage(*store_, kGemma);
  ASSERT_TRUE(p.estimate.estimate.has_value()) << p.estimate.unavailable;
  const std::string html = RenderHtml(p.doc);
  if (const char* dir = std::getenv("HUBWATCH_PAGE_DUMP")) {
    std::ofstream(std::string(dir) + "/gemma.html") << html;
    std::ofstream(std::string(dir) + "/gemma.md") << RenderMarkdown(p.doc);
  }
  std::vector<std::string> order = {"<h1>gemma-2-9b-it: GPU memory to fine-tune</h1>",
                                    "Reconstructed from its own config.json with no weights read"};
  for (const std::string& t : kSectionTitles) order.push_back(">" + t + "</h2>");
  ExpectInOrder(html, order);
  // The breadcrumb leads to the family's page of the index.
  EXPECT_NE(html.find("Models</a> / <a href=\"/?family=gemma2#family-gemma2\">gemma2</a>"),
            std::string::npos);
  // The Hub's counts, as the fixture hub gives them, in the lead before the first section.
  ExpectInOrder(html, {"Reconstructed from its own config.json", "187,342",
                       " downloads on the Hub in the last 30 days", "741", " likes (as of 2024-12-02)",
                       "Tags on the Hub: ", "<code>gemma2</code>", ">" + kSectionTitles[0]});
  EXPECT_NE(html.find("9,241,705,984"), std::string::npos);
  // The checkpoint's scalars beside ours, and the delta: tied embeddings are stored once.
  ExpectInOrder(html, {"ours, from the structure", "9,241,705,984",
                       "the checkpoint&#39;s scalars (safetensors headers)", "9,241,705,984",
                       "delta (checkpoint − ours)", ">0<"});
  ExpectInOrder(html, {"Serve weights", "18.5 GB", "KV cache", "1.41 GB", "at 4,096 tokens"});
  EXPECT_NE(html.find("8,192 × 3,584"), std::string::npos);
  EXPECT_NE(html.find("<details><summary>All "), std::string::npos);
  EXPECT_NE(html.find("H100"), std::string::npos);
  EXPECT_NE(html.find("2 cards at batch 1 (layers 0–"), std::string::npos);
  EXPECT_NE(html.find("Assumptions (preset hubwatch)"), std::string::npos);
  for (const RevisionHistory& h : p.history) {
    EXPECT_NE(html.find("https://huggingface.co/google/gemma-2-9b-it/commit/" + h.revision.sha),
              std::string::npos);
  }
  EXPECT_EQ(p.history.size(), 2u);
  EXPECT_NE(html.find("hubwatch estimate config.json"), std::string::npos);
  EXPECT_NE(html.find("/api/v1/plan"), std::string::npos);
  EXPECT_LT(html.size(), 150u * 1024);

  const std::string md = RenderMarkdown(p.doc);
  std::vector<std::string> md_order = {"# gemma\\-2\\-9b\\-it: GPU memory to fine\\-tune"};
  for (const std::string& t : kSectionTitles) md_order.push_back("## " + t);
  ExpectInOrder(md, md_order);
  EXPECT_NE(md.find("9,241,705,984"), std::string::npos);
}

// Where each mode's memory goes: a stacked bar per mode against the cards' sizes, drawn as SVG
// in the HTML and given as the same numbers in the Markdown twin; a segment's numbers are the
// plan's components summed by category.
TEST_F(ModelPageTest, TheMemoryChartShowsWhereEachModesMemoryGoesInBothRenderings) {
  BuiltPage p = BuildPage(*store_, kGemma);
  ASSERT_TRUE(p.estimate.estimate.has_value()) << p.estimate.unavailable;
  const Estimate& e = *p.estimate.estimate;
  const std::string html = RenderHtml(p.doc);
  ExpectInOrder(html, {"<figure class=\"chart\">", "<svg viewBox=", ">16 GB</text>",
                       ">80 GB</text>", ">Full fine-tune</text>", ">LoRA</text>", ">QLoRA</text>",
                       ">Serve</text>", ">weights</text>", ">KV cache</text>",
                       "<figcaption>Where the memory goes, per mode"});
  // The serving bar's weights segment: 18.5 GB, as the tile says.
  EXPECT_NE(html.find("<title>weights: 18.5 GB</title>"), std::string::npos);
  double serve_total = 0;
  for (const MemoryComponent& c : e.memory[3].components) serve_total += c.bytes / 1e9;
  char total[32];
  std::snprintf(total, sizeof total, "%.1f GB", serve_total);
  EXPECT_NE(html.find(std::string(">") + total + "</text>"), std::string::npos) << total;
  const std::string md = RenderMarkdown(p.doc);
  std::snprintf(total, sizeof total, "**%.1f**", serve_total);
  ExpectInOrder(md, {"Where the memory goes, per mode", "| weights | gradients | optimizer state",
                     "Serve", "18.5", total, "Against: 16 GB 16.0 GB"});
  // Beside it, one line on how such estimates compare with measured runs, and where to look.
  const CalibrationSummary& s = Published().summary;
  EXPECT_NE(html.find("Memory estimates are checked against " + std::to_string(s.cases) +
                      " published measured runs"),
            std::string::npos);
  EXPECT_NE(html.find("<a href=\"/calibration\">how each compares</a>"), std::string::npos);
}

// /calibration: every published run estimated with its own settings (the same as `hubwatch
// calibrate`), a strip of errors per mode with the +-10% band, every run in a table, the
// skipped ones with their reasons; the Markdown twin says the same in words.
TEST(CalibrationPage, ShowsEveryRunItsErrorByModeAndWhyTheRestAreSkipped) {
  const PublishedCalibration& p = Published();
  EXPECT_EQ(p.cases.size(), 197u);
  EXPECT_GE(p.summary.cases, 100u);
  EXPECT_LE(p.summary.median_abs_error_pct, 10);
  EXPECT_EQ(p.summary.wrong_verdicts, 0u);
  const Document doc = BuildCalibrationPage();
  const std::string html = RenderHtml(doc);
  ExpectInOrder(html, {"<h1>Memory estimates against measured runs</h1>", "<svg viewBox=",
                       "class=\"band\"", ">Full fine-tune</text>", ">Inference</text>",
                       "<circle class=\"dot\"", "qwen25-speed-benchmark-108",
                       "Runs not estimated, and why", "the source&#39;s unit is ambiguous"});
  size_t dots = 0;
  for (size_t at = html.find("<circle"); at != std::string::npos;
       at = html.find("<circle", at + 1)) {
    ++dots;
  }
  EXPECT_EQ(dots, p.summary.cases);  // one per estimated run (none ran out of memory)
  const std::string md = RenderMarkdown(doc);
  ExpectInOrder(md, {"# Memory estimates against measured runs", "Inference: ",
                     " within ±10%", "| qwen25\\-speed\\-benchmark\\-108 |"});
}

TEST(BarChartSvg, EscapesItsTextsAndDrawsNothingForNothing) {
  BarChart chart;
  EXPECT_EQ(BarChartSvg(chart), "");
  chart.caption = "<script>alert(1)</script>";
  chart.unit = "GB";
  chart.categories = {"a\"b", "<c>"};
  chart.bars = {{"<b>bar</b>", {1, 2}}, {"zero", {0, 0}}};
  chart.marks = {{"& mark", 4}};
  const std::string svg = BarChartSvg(chart);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_EQ(svg.find("<c>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;b&gt;bar&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("&amp; mark"), std::string::npos);
  EXPECT_NE(svg.find(">3 GB</text>"), std::string::npos);  // the first bar's total
  EXPECT_NE(svg.find(">0 GB</text>"), std::string::npos);  // an empty bar still has its row
  chart.bars = {{"nan", {std::nan(""), -1}}};
  chart.marks.clear();
  EXPECT_EQ(BarChartSvg(chart), "");  // nothing to scale to
}

// An encoder's page says it keeps no KV cache, instead of showing a cache of 0 GB.
TEST_F(ModelPageTest, AnEncoderKeepsNoKvCache) {
  BuiltPage p = BuildPage(*store_, kEncoder);
  ASSERT_TRUE(p.estimate.estimate.has_value()) << p.estimate.unavailable;
  const std::string html = RenderHtml(p.doc);
  ExpectInOrder(html, {"Reconstructed from its own config.json", "22,713,216 parameters, bert",
                       "keeps no KV cache", "KV cache", ">none<", "reads its input in one pass"});
  EXPECT_EQ(html.find("0.00 GB"), std::string::npos);
}

// A multimodal wrapper's page counts each part and shows them as a table of their own.
TEST_F(ModelPageTest, AMultimodalModelShowsItsParts) {
  BuiltPage p = BuildPage(*store_, kMultimodal);
  ASSERT_TRUE(p.estimate.estimate.has_value()) << p.estimate.unavailable;
  const Estimate& e = *p.estimate.estimate;
  ASSERT_GE(e.graph.sections.size(), 2u);
  const std::string html = RenderHtml(p.doc);
  ExpectInOrder(html, {"7,063,427,072 parameters, llava", "parts: ", e.graph.sections[0].name,
                       "Parts, each counted on its own", e.graph.sections[0].label});
  uint64_t sum = 0;
  for (size_t i = 0; i < e.graph.sections.size(); ++i) {
    sum += e.params.by_section.at(i);
    EXPECT_NE(html.find(Grouped(e.params.by_section[i])), std::string::npos) << i;
  }
  EXPECT_EQ(sum, e.params.total);
}

// A state-space model keeps a fixed state per sequence instead of a growing cache: the tile says
// so, with the state's size, at any context.
TEST(ModelPageSections, AStateSpaceModelShowsItsFixedStateNotACache) {
  std::ifstream in(std::string(HUBWATCH_FIXTURES_DIR) +
                   "/models/mlx-community__mamba-2.8b-hf-f32.config.json");
  const std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<Estimate> e = EstimateModelFromText(config, {});
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_GT(e->kv.state_bytes_per_sequence, 0);
  Document doc;
  doc.sections.push_back(MemorySection(*e));
  const std::string html = RenderHtml(doc);
  ExpectInOrder(html, {"State per sequence", Gb(e->kv.state_bytes_per_sequence),
                       "fixed: it does not grow with the context"});
  EXPECT_EQ(html.find("not counted"), std::string::npos);
}

// A repo with safetensors and no config.json: every number says it comes from the tensors.
TEST_F(ModelPageTest, ACheckpointWithoutAConfigIsEstimatedFromItsTensors) {
  BuiltPage p = BuildPage(*store_, kWeightsOnly);
  ASSERT_TRUE(p.estimate.estimate.has_value()) << p.estimate.unavailable;
  EXPECT_EQ(p.estimate.estimate->graph.source, GraphSource::kCheckpointTensors);
  const std::string html = RenderHtml(p.doc);
  ExpectInOrder(html, {"From the checkpoint&#39;s tensors: structure not modelled.",
                       "124,439,808 parameters counted exactly", "no model_type",
                       "The structure was read from the checkpoint itself",
                       "What the estimate assumed or could not read:"});
}

// The history opens with a timeline: the newest revisions with changes, their changes stacked by
// impact in the impact's colour, and the same counts as a table in the Markdown twin.
TEST_F(ModelPageTest, TheHistoryOpensWithATimelineOfChangesByImpact) {
  BuiltPage p = BuildPage(*store_, kMistral);
  const std::string html = RenderHtml(p.doc);
  size_t with_changes = 0;
  for (const RevisionHistory& h : p.history) with_changes += h.changes.empty() ? 0 : 1;
  ASSERT_GT(with_changes, 0u);
  ExpectInOrder(html, {">What changed upstream</h2>", "<svg viewBox=", "class=\"tone-",
                       ">breaking</text>", ">behavioral</text>", ">cosmetic</text>",
                       "<figcaption>The newest revisions with changes"});
  const std::string md = RenderMarkdown(p.doc);
  ExpectInOrder(md, {"## What changed upstream", "The newest revisions with changes",
                     "| breaking | behavioral | cosmetic | total |"});
}

TEST_F(ModelPageTest, HistoryShowsEachRevisionsEvidence) {
  const std::string mistral = RenderHtml(BuildPage(*store_, kMistral).doc);
  EXPECT_NE(mistral.find("The template&#39;s unified diff"), std::string::npos);
  EXPECT_NE(mistral.find("Rendered prompt diff"), std::string::npos);
  const std::string llama = RenderHtml(BuildPage(*store_, kLlama).doc);
  EXPECT_NE(llama.find("Patch: the fields that changed"), std::string::npos);
  EXPECT_NE(llama.find("<code>eos_token_id</code>"), std::string::npos);
  const std::string phi = RenderHtml(BuildPage(*store_, kPhi3).doc);
  EXPECT_NE(phi.find("same tensors, new values"), std::string::npos) << phi.substr(0, 100);
}

TEST_F(ModelPageTest, AnOlderRevisionIsShownWithTheWholeTimeline) {
  BuiltPage newest = BuildPage(*store_, kMistral);
  ASSERT_GE(newest.history.size(), 3u);
  const std::string old_sha = newest.history.back().revision.sha;
  BuiltPage old = BuildPage(*store_, kMistral, old_sha);
  const std::string html = RenderHtml(old.doc);
  EXPECT_NE(html.find("at revision <a href=\"https://huggingface.co/" + std::string(kMistral) +
                      "/commit/" + old_sha + "\">" + old_sha.substr(0, 12)),
            std::string::npos);
  EXPECT_NE(html.find("?revision=" + newest.history.front().revision.sha), std::string::npos);
}

}  // namespace
}  // namespace hubwatch::page::testing
