#pragma once

// Badges for README files: the shields.io endpoint JSON (shields.io's "endpoint" badge schema) and
// an SVG of the same badge in shields' "flat" style, so a README can embed either
//   https://img.shields.io/endpoint?url=<.../badge>     or     <.../badge.svg>
//
// The JSON holds only keys shields accepts (schemaVersion 1, label, message - never empty -,
// color, isError, cacheSeconds >= 300), since shields rejects unknown keys. Pure functions;
// thread-safe.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/store/pins.h"
#include "tracker/store/store.h"

namespace hubwatch::api {

// shields never caches an endpoint for less than 300 s; asking for less is pointless.
inline constexpr int64_t kBadgeCacheSeconds = 300;

struct Badge {
  std::string label;
  std::string message;  // never empty
  std::string color;    // a shields colour name: brightgreen, orange, red, blue, lightgrey
  bool is_error = false;
};

// "chat template", "generation config", "config", ... for a change kind name.
std::string KindLabel(std::string_view kind);

// "just now", "1 minute ago", "5 hours ago", "2 days ago", "3 months ago", "1 year ago".
std::string TimeAgo(int64_t seconds);

// ?pin=SHA[&kind=K]: "3 changes since 1a2b3c4" (cosmetic changes do not count), or "no
// changes since pin". Red when one of them breaks loading or shapes, orange otherwise, green
// for none. `kind` "" = any kind; otherwise the message names it ("2 chat template changes
// since 1a2b3c4").
Badge PinBadge(std::string_view pin_sha, const store::ChangeTally& tally, std::string_view kind);

// ?pins: the repo's configured pins (store::PinStatuses): "2 advisories affect 1a2b3c4" for the
// pin most affected (orange), "pins current" (green) when none is affected, "no pins" (grey)
// when the repo has none, "pin 1a2b3c4 unknown" (grey) when one is not a stored revision.
Badge PinsBadge(const std::vector<store::PinStatus>& pins);

// Without a pin: "<kind> changed 2 days ago" (label: the kind, or "changed" for any kind),
// orange within a week, blue before; "no changes" (green) when nothing but cosmetic changes.
// `changed_at`: when the change's revision was made (Unix seconds).
Badge LastChangeBadge(std::string_view kind, std::optional<int64_t> changed_at, int64_t now);

// ?derivatives=lagging: "3 of 40 lagging" (label "derivatives"; of the derivatives checked
// against upstream's newest fix: those whose statuses predate it are unchecked and not
// counted), orange when any lags, green when none does; "no derivatives checked" (grey).
Badge DerivativesBadge(const store::DerivativeTally& tally);

nlohmann::json BadgeToShieldsJson(const Badge& badge);
std::string RenderBadgeSvg(const Badge& badge);

}  // namespace hubwatch::api
