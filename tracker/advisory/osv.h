#pragma once

// OSV advisories for changes: one schema-valid record (the official OSV schema, with the x_
// prefix for local databases) per change.
//
//   id              x_HUBWATCH-<16 hex>: SHA-256 of repo, revision, kind, path and ordinal,
//                   so ingesting the same history into a fresh database yields the same ids
//   summary         the change, what it means, where; one line of at most 120 bytes:
//                   "eos_token_id 128001 -> 128009: generation may stop at other tokens
//                   (Meta-Llama-3-8B-Instruct@4d6c61d)"
//   details         Markdown: what changed, its impact, the diff
//   affected        one GIT range on https://huggingface.co/<repo>: introduced = the revision
//                   where the replaced state first appeared (or "0"), fixed = the revision that
//                   replaced it. No package: OSV has no Hugging Face ecosystem; the purl
//                   pkg:huggingface/<ns>/<name>@<sha> goes in database_specific.
//   references      the commit page (FIX), the model page (PACKAGE)
//   database_specific {repo, revision, parent, kind, impact, path, change, purl, diff,
//                   committed_at, estimate_delta, backfill (true for history)}
// Pure functions; thread-safe.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/advisory/time_text.h"
#include "tracker/diff/change.h"

namespace hubwatch::advisory {

// The OSV schema_version hubwatch writes.
inline constexpr const char kOsvSchemaVersion[] = "1.7.5";
inline constexpr const char kIdPrefix[] = "x_HUBWATCH-";

struct AdvisoryContext {
  std::string repo;          // "google/gemma-2-9b-it"
  std::string revision;      // the 40-hex sha that made the change
  std::string parent;        // the revision before it ("" for the first)
  std::string introduced;    // where the replaced state first appeared; "0" when unknown
  std::string published;     // RFC 3339 UTC ("...Z"): when hubwatch published the advisory
  std::string modified;      // RFC 3339 UTC: when this record was last written
  std::string committed_at;  // the revision's commit time as the Hub gave it ("" if unknown)
  std::string hub_url = "https://huggingface.co";
  int ordinal = 0;  // among changes of the same kind and path in the revision
  bool backfill = false;  // committed before the repo was tracked: published, not news
  std::optional<nlohmann::json> estimate_delta;
};

// kIdPrefix + the first 16 hex digits of SHA-256(key): the stable ids of every record here.
std::string IdOfKey(std::string_view key);

std::string AdvisoryId(std::string_view repo, std::string_view revision, diff::ChangeKind kind,
                       std::string_view path, int ordinal);

// The summary above: the change's own summary (its most severe difference first); what that
// kind of change means for someone pinned before it, when it fits; the repo's name and the
// short revision. When it does not fit, the meaning goes first, then the difference is cut.
std::string AdvisorySummary(const diff::Change& change, const AdvisoryContext& context);

// The change's summary and details within diff::BoundChange's bounds, so a record takes at most
// about kMaxDetailsBytes (database_specific.diff) + 64 KiB (details) + the estimate delta.
nlohmann::json BuildOsv(const diff::Change& change, const AdvisoryContext& context);

}  // namespace hubwatch::advisory
