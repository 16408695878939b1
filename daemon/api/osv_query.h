#pragma once

// The request half of osv.dev's POST /v1/query, for a database of Hugging
// Face revisions:
//   {"commit": "<40 hex>"}                                  every repo with that revision
//   {"package": {"name": "ns/name"}, "commit"|"version"}    one repo; version = a revision
//   {"package": {"purl": "pkg:huggingface/ns/name[@rev]"}}  (7-40 hex) or a ref ("main")
//   {"package": {"name": "https://huggingface.co/ns/name", "ecosystem": "GIT"}, ...}
//   "page_token": the next_page_token of the previous page
// commit and version exclude each other, as do a purl @version and version (400). A package of
// another ecosystem or purl type, or a GIT URL on another host, is valid and matches nothing.
// Pure function; thread-safe.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::api {

struct OsvQuery {
  std::string repo;       // "" = by commit alone
  std::string commit;     // full 40-hex, lower case; "" = none
  std::string version;    // a revision prefix or ref name; "" = none
  int64_t after_seq = 0;  // from page_token
  bool matches_nothing = false;
};

// Errors (InvalidInput) are the 400 messages.
Result<OsvQuery> ParseOsvQuery(const nlohmann::json& query, std::string_view hub_url);

// For each query, the index of the first query equal to it (its own index when it is the
// first): a batch runs each distinct query once.
std::vector<size_t> FirstAsked(const std::vector<OsvQuery>& queries);

// next_page_token for a page that ended at `last_seq`, and back.
std::string PageToken(int64_t last_seq);

}  // namespace hubwatch::api
