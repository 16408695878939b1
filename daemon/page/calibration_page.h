#pragma once

// The published measured runs every memory estimate is checked against: `hubwatch calibrate`'s
// data, embedded (calibration_data.h), estimated once with each run's settings, and shown on
// /calibration (and its Markdown twin) and in one line on every model page's memory section.

#include <vector>

#include "daemon/page/document.h"
#include "estimator/calibration.h"

namespace hubwatch::page {

struct PublishedCalibration {
  std::vector<CalibrationCase> cases;  // every run, in the file's order; skipped ones say why
  CalibrationSummary summary;
};

// Computed on first use (a few hundred estimates), then kept. Thread-safe.
const PublishedCalibration& Published();

Document BuildCalibrationPage();

// "Memory estimates are checked against N published measured runs: median |error| M% (how)."
Paragraph CalibrationLine();

}  // namespace hubwatch::page
