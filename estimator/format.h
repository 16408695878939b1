#pragma once

// Number formatting shared by the estimator's explanations and reports.

#include <cstdint>
#include <string>

namespace hubwatch {

// 9241705984 -> "9,241,705,984"
std::string Grouped(uint64_t value);
// Bytes as decimal gigabytes with two decimals: "18.48 GB".
std::string Gigabytes(double bytes);
// A number with up to `digits` significant decimals, trailing zeros dropped: 1.15, 16, 0.5.
std::string Number(double value, int digits = 4);

}  // namespace hubwatch
