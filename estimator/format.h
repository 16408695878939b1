#pragma once

// Number formatting shared by the estimator's explanations, messages and reports. Text that
// upstream controls goes through estimator/base/text.h (included here for the reports).

#include <cstdint>
#include <string>

#include "estimator/base/text.h"

namespace hubwatch {

// Bytes as decimal gigabytes with two decimals: "18.48 GB".
std::string Gigabytes(double bytes);
// A number with up to `digits` significant decimals, trailing zeros dropped: 1.15, 16, 0.5.
std::string Number(double value, int digits = 4);

}  // namespace hubwatch
