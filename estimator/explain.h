#pragma once

// The words behind the numbers: a title for each memory plan and, for each component, how it
// was computed ("9,241,705,984 params x 4 B"), derived from the estimate's assumptions. Used by
// every rendering so they explain alike. Pure functions; thread-safe.

#include <string>

#include "estimator/estimate.h"

namespace hubwatch {

std::string PlanTitle(const MemoryPlan& plan, const Estimate& estimate);
std::string ExplainComponent(const MemoryComponent& component, const MemoryPlan& plan,
                             const Estimate& estimate);

}  // namespace hubwatch
