#pragma once

// How a derivative stands on one upstream fix: the facets the fix changed (upstream's files
// before and after the advised change), then the derivative's value of each.
//
// Per facet the fix changed: the derivative does not ship its file -> not applicable; it has
// upstream's after-value -> fixed; the before-value (a key the fix added counts as "before"
// when the derivative lacks it) -> lagging; anything else -> diverged. Over the facets: lagging
// if any facet lags (a fix copied in part is not a fix), else fixed if any is fixed, else
// diverged if any diverged, else not applicable.
// Pure functions; thread-safe.

#include <map>
#include <optional>
#include <string>

#include "tracker/derivatives/derivative.h"
#include "tracker/derivatives/facets.h"

namespace hubwatch::derivatives {

struct FacetChange {
  std::optional<std::string> before;  // nullopt: absent before the fix
  std::optional<std::string> after;   // nullopt: removed by the fix
};

// What one upstream fix changed, by facet. Empty: the fix changed nothing a derivative check
// can see (then it is not checked).
struct FixFacets {
  std::string advisory_id;
  std::map<std::string, FacetChange> changed;
};

// The facets `fix` changed between upstream's revision before it and the one that made it,
// restricted to what the advised change is about: its file (fix.path) for a file's change, the
// chat templates for a chat_template change, every facet for a cross-file kind. Facets of a
// file the change added or removed whole are left out (an upload is not a fix).
FixFacets FacetsOfFix(const UpstreamFix& fix, const FacetSet& before, const FacetSet& after);

LagStatus Classify(const FixFacets& fix, const FacetSet& derivative);

}  // namespace hubwatch::derivatives
