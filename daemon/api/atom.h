#pragma once

// The advisories as an Atom 1.0 feed (RFC 4287), newest first, like RustSec's feed.xml: one
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

std::string RenderAtomFeed(const std::vector<store::AdvisoryRecord>& newest_first,
                           const AtomOptions& options);

}  // namespace hubwatch::api
