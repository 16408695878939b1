#include "tracker/derivatives/lag.h"

#include <set>

namespace hubwatch::derivatives {
namespace {

std::optional<std::string> ValueOf(const FacetSet& facets, const std::string& facet) {
  const std::string* value = facets.Value(facet);
  return value ? std::optional<std::string>(*value) : std::nullopt;
}

bool Concerns(const UpstreamFix& fix, const std::string& facet) {
  const bool is_template = facet == "chat_template" || facet.starts_with("chat_template:");
  if (fix.kind == "chat_template") return is_template;
  if (fix.path.empty()) return true;  // special_tokens and other cross-file kinds
  return facet.starts_with(fix.path + "#") || (is_template && fix.path == "chat_template.jinja");
}

}  // namespace

FixFacets FacetsOfFix(const UpstreamFix& fix, const FacetSet& before, const FacetSet& after) {
  FixFacets out;
  out.advisory_id = fix.advisory_id;
  std::set<std::string> names;
  for (const auto& [facet, value] : before.values) names.insert(facet);
  for (const auto& [facet, value] : after.values) names.insert(facet);
  for (const std::string& facet : names) {
    if (!Concerns(fix, facet)) continue;
    // A file the change added or removed whole is not a fix a copy can lag on: a derivative
    // that ships it copied it after it appeared, one that does not cannot be told apart.
    if (before.Cover(facet) == Coverage::kNotShipped ||
        after.Cover(facet) == Coverage::kNotShipped) {
      continue;
    }
    FacetChange change{ValueOf(before, facet), ValueOf(after, facet)};
    if (change.before != change.after) out.changed.emplace(facet, std::move(change));
  }
  return out;
}

LagStatus Classify(const FixFacets& fix, const FacetSet& derivative) {
  bool fixed = false;
  bool diverged = false;
  for (const auto& [facet, change] : fix.changed) {
    const Coverage coverage = derivative.Cover(facet);
    if (coverage == Coverage::kNotShipped) continue;
    const std::optional<std::string> value = ValueOf(derivative, facet);
    if (value == change.after) {
      fixed = true;
    } else if (value == change.before) {
      return LagStatus::kLagging;
    } else {
      diverged = true;
    }
  }
  if (fixed) return LagStatus::kFixed;
  if (diverged) return LagStatus::kDiverged;
  return LagStatus::kNotApplicable;
}

}  // namespace hubwatch::derivatives
