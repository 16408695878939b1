#include "daemon/page/calibration_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/page/calibration_data.h"
#include "estimator/measured_run.h"

namespace hubwatch::page {
namespace {

std::string Fixed(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

PublishedCalibration Compute() {
  CalibrationConfigs configs;
  for (const EmbeddedConfig& c : EmbeddedConfigs()) {
    nlohmann::json j = nlohmann::json::parse(c.json, nullptr, false);
    if (!j.is_discarded()) configs.Add(std::string(c.model), std::move(j));
  }
  std::deque<MeasuredRun> runs;  // its elements stay put: calibration_runs points at them
  std::vector<CalibrationRun> calibration_runs;
  const std::string_view text = EmbeddedMeasuredRuns();
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded()) continue;
    Result<MeasuredRun> run = ParseMeasuredRun(record);
    if (!run.ok()) continue;
    runs.push_back(std::move(run).value());
    calibration_runs.push_back({&runs.back(), configs.For(runs.back().model)});
  }
  PublishedCalibration out;
  out.cases = CalibrateAll(calibration_runs);
  out.summary = Summarize(out.cases);
  return out;
}

const char* ModeLabel(const std::string& mode) {
  if (mode == "full") return "Full fine-tune";
  if (mode == "lora") return "LoRA";
  if (mode == "qlora") return "QLoRA";
  if (mode == "inference") return "Inference";
  return nullptr;
}

}  // namespace

const PublishedCalibration& Published() {
  static const PublishedCalibration published = Compute();
  return published;
}

Paragraph CalibrationLine() {
  const CalibrationSummary& s = Published().summary;
  return Paragraph{{Text("Memory estimates are checked against " + std::to_string(s.cases) +
                         " published measured runs: median |error| " +
                         Fixed(s.median_abs_error_pct, "%.1f") + "% ("),
                    Link("how each compares", "/calibration"), Text(").")}};
}

Document BuildCalibrationPage() {
  const PublishedCalibration& p = Published();
  const CalibrationSummary& all = p.summary;
  Document doc;
  doc.title = "Memory estimates against measured runs · hubwatch";
  doc.h1 = "Memory estimates against measured runs";
  doc.breadcrumb = {Link("Models", "/"), Text(" / "), Text("Calibration")};
  doc.alternates = {{"text/markdown", "/calibration.md"}};
  doc.lead.push_back(Paragraph{
      {Text("Each published measured run of fine-tuning or serving an open model, estimated from "
            "its released config.json with that run's own settings (optimizer, precision, "
            "checkpointing, batch, length, sharding, quantization) in the number it measured: "
            "torch's allocated or reserved bytes, or the card as nvidia-smi shows it. " +
            std::to_string(all.cases) + " runs estimated, " + std::to_string(all.skipped) +
            " skipped with the reason; median |error| " + Fixed(all.median_abs_error_pct, "%.1f") +
            "%, worst " + Fixed(all.worst_abs_error_pct, "%.1f") + "% (" + all.worst_id + "); " +
            std::to_string(all.wrong_verdicts) +
            " runs that finished would have been called \"does not fit\".")}});

  Section modes{"by-mode", "By mode", {}};
  DotStrip strip;
  strip.caption =
      "Error of each estimate, (estimated − measured) / measured, by mode; the band "
      "is ±10%";
  strip.unit = "%";
  strip.min = -40;
  strip.max = 40;
  strip.band = 10;
  Table table{"Error by mode",
              {"mode", "runs", "within ±10%", "median |error|", "worst |error|"},
              {},
              {false, true, true, true, true},
              true,
              {}};
  for (const char* mode : {"full", "lora", "qlora", "inference"}) {
    DotStrip::Row row{ModeLabel(mode), {}};
    std::vector<CalibrationCase> of_mode;
    for (const CalibrationCase& c : p.cases) {
      if (c.mode != mode || !c.skipped.empty() || c.out_of_memory) continue;
      of_mode.push_back(c);
      row.dots.push_back({c.error_pct, c.id + " (" + c.model + "): measured " +
                                           Fixed(c.measured_gib, "%.2f") + " GiB, estimated " +
                                           Fixed(c.estimated_gib, "%.2f") + " GiB, " +
                                           Fixed(c.error_pct, "%+.1f") + "%"});
    }
    const CalibrationSummary s = Summarize(of_mode);
    size_t within = 0;
    for (const CalibrationCase& c : of_mode) within += std::fabs(c.error_pct) <= 10 ? 1 : 0;
    table.rows.push_back({{Text(row.label)},
                          {Text(std::to_string(s.cases))},
                          {Text(std::to_string(within))},
                          {Text(Fixed(s.median_abs_error_pct, "%.1f") + "%")},
                          {Text(Fixed(s.worst_abs_error_pct, "%.1f") + "%")}});
    strip.rows.push_back(std::move(row));
  }
  modes.blocks.push_back(std::move(strip));
  modes.blocks.push_back(std::move(table));
  doc.sections.push_back(std::move(modes));

  Section runs{"runs", "Every run", {}};
  Table every{"Measured against estimated, GiB",
              {"run", "model", "mode", "metric", "measured", "estimated", "error"},
              {},
              {false, false, false, false, true, true, true},
              true,
              {}};
  Table skipped{"Runs not estimated, and why",
                {"run", "why"},
                {},
                {},
                true,
                "Skipped runs: " + std::to_string(all.skipped)};
  for (const CalibrationCase& c : p.cases) {
    if (!c.skipped.empty()) {
      skipped.rows.push_back({{Text(c.id)}, {Text(c.skipped)}});
      continue;
    }
    every.rows.push_back({{Text(c.id)},
                          {Text(c.model)},
                          {Text(c.mode)},
                          {Text(c.metric)},
                          {Text(c.out_of_memory ? "out of memory" : Fixed(c.measured_gib, "%.2f"))},
                          {Text(Fixed(c.estimated_gib, "%.2f"))},
                          {Chip(c.out_of_memory ? "-" : Fixed(c.error_pct, "%+.1f") + "%",
                                std::fabs(c.error_pct) <= 10   ? Tone::kGood
                                : std::fabs(c.error_pct) <= 25 ? Tone::kWarn
                                                               : Tone::kBad)}});
  }
  runs.blocks.push_back(std::move(every));
  runs.blocks.push_back(std::move(skipped));
  runs.blocks.push_back(Paragraph{
      {Text("The same table from the command line: "),
       Code("hubwatch calibrate --measurements tests/fixtures/calibration/measured-memory.jsonl "
            "--configs tests/fixtures/models --held-out"),
       Text(". The figures, their sources and settings: tests/fixtures/calibration/.")}});
  doc.sections.push_back(std::move(runs));
  return doc;
}

}  // namespace hubwatch::page
