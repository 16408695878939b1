#pragma once

// The advisories (and follow events) as an Atom 1.0 feed (RFC 4287), newest first, like RustSec's feed.xml: one
// entry per advisory with its OSV summary and details, links to the OSV record and to the
// commit on the Hub, and the change kind as category. Always well-formed XML (xml_text.h).
// Pure function; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "tracker/store/records.h"

namespace hubwatch::api {

struct AtomOptions {
  std::string base_url;  // "http://127.0.0.1:8437": links to /v1/vulns/{id}
  std::string self_url;  // the feed's own URL, with its query
  std::string hub_url;   // "https://huggingface.co": commit links
  std::string scope;     // "" or the filter ("google/gemma-2-9b-it", "chat_template")
  int64_t now = 0;       // the feed's <updated> when it has no entries
};

// With `follows` (newest first too), the follow events among them, by time: "Tracked
// Qwen/Qwen3-8B (follow rule Qwen)", linked to the repo on the Hub, category "tracked" or
// "untracked". At most `limit` entries in all (0: every one given).
std::string RenderAtomFeed(const std::vector<store::AdvisoryRecord>& newest_first,
                           const AtomOptions& options,
                           const std::vector<store::FollowEvent>& follows = {}, size_t limit = 0);

}  // namespace hubwatch::api
