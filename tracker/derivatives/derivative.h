#pragma once

// A derivative of a tracked ("upstream") repo: a fine-tune, adapter, quantization or merge that
// the Hub links to it through its `base_model:{relation}:{upstream}` tag, and how it stands
// against each behavioral fix upstream made to the files it copies. Plain value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::derivatives {

enum class Relation { kFinetune, kAdapter, kQuantized, kMerge };
std::string_view RelationName(Relation relation);  // "finetune", "adapter", "quantized", "merge"
std::optional<Relation> ParseRelation(std::string_view name);

// Where a derivative stands on one upstream advisory:
//   fixed           it carries the content upstream has after the change
//   lagging         it carries the content upstream had before the change
//   diverged        its own content, neither
//   not_applicable  it does not ship the file(s) the change is about (an adapter, a GGUF for
//                   generation_config.json)
enum class LagStatus { kFixed, kLagging, kDiverged, kNotApplicable };
std::string_view LagStatusName(LagStatus status);  // "fixed", "lagging", "diverged", ...
std::optional<LagStatus> ParseLagStatus(std::string_view name);

// One upstream advisory a derivative is checked against: a published, behavioral or breaking
// change of config.json, generation_config.json, the tokenizer files, the chat template or the
// special tokens, at upstream revision `sha` whose parent is `parent_sha`.
struct UpstreamFix {
  std::string advisory_id;
  int64_t change_id = 0;
  std::string kind;  // diff::KindName
  std::string path;  // the file; "" for cross-file kinds (special_tokens)
  std::string sha;
  std::string parent_sha;  // "" when the revision has no stored parent (then not checkable)
  std::string summary;     // the advisory's summary
};

// What the Hub says of a derivative that throwaway copies lack: the signals derivatives are
// ranked by when more are found than followed (rank.h). From the listing or the repo's own info.
struct Signals {
  int64_t downloads = 0;  // the Hub's count over the last 30 days
  int64_t likes = 0;
  std::string created_at;  // RFC 3339 as the Hub writes it; "": unknown
  bool operator==(const Signals&) const = default;
};

struct AdvisoryLag {
  std::string advisory_id;  // the upstream advisory
  LagStatus status = LagStatus::kNotApplicable;
  // The derivative's own advisory, when it lagged on this fix at some check (kept after it
  // catches up, then updated to say so).
  std::string derivative_advisory_id{};
};

// What one check of a derivative found.
struct DerivativeCheck {
  std::string upstream;  // the tracked repo
  std::string id;        // the derivative repo
  Relation relation = Relation::kFinetune;
  std::string head;           // the commit checked (the listing's sha of main)
  std::string last_modified;  // the listing's lastModified (RFC 3339), "" when not given
  int64_t checked_at = 0;     // Unix seconds
  std::string facets_json;    // what was read (FacetSet as JSON; opaque to the store)
  std::string error;          // "": read; else why not (then `lags` is empty and the old are kept)
  std::vector<AdvisoryLag> lags;     // one per UpstreamFix checked
  std::optional<Signals> signals{};  // as listed or followed now; nullopt: the stored ones stay
  // The seq of upstream's newest fix (advisories.seq) when `lags` were classified: they cover
  // every fix up to it. nullopt: the newest at recording. Ignored with an error.
  std::optional<int64_t> fixes_through{};
};

// A derivative as stored: the last check, and the statuses as of it.
struct DerivativeRecord {
  std::string upstream;
  std::string id;
  Relation relation = Relation::kFinetune;
  std::string head;
  std::string last_modified;
  int64_t listed_at = 0;   // the last listing that showed it
  int64_t checked_at = 0;  // 0: never checked
  std::string facets_json;
  std::string error;
  std::vector<AdvisoryLag> lags;  // by upstream advisory id
  Signals signals;                // as last listed or followed
  int64_t fixes_through = 0;      // as DerivativeCheck::fixes_through, of the check that read it
  // Read at least once, and its lags cover upstream's newest fix (or upstream has none). False:
  // its statuses predate that fix (or it was never read): shown and counted as unchecked, never
  // as fixed, until a check classifies it again.
  bool current = false;
};

// Counts of derivatives by status, for one upstream advisory or over a repo's derivatives.
struct LagCounts {
  int64_t fixed = 0;
  int64_t lagging = 0;
  int64_t diverged = 0;
  int64_t not_applicable = 0;
  int64_t unchecked = 0;  // derivatives whose status on it predates upstream's newest fix
};

// Why a round stopped following a derivative it had stored.
enum class EvictionReason {
  kRankedOut,  // more derivatives found than `max`, and it ranked below the last one kept
  kUnlisted,   // the listing was complete and no longer showed it
  kNotFound,   // its own request: the Hub no longer serves it (deleted, private, renamed)
  kUntagged,   // its own request: no longer tagged base_model:{relation}:{upstream}
};
std::string_view EvictionReasonName(EvictionReason reason);  // "ranked_out", "unlisted", ...
std::optional<EvictionReason> ParseEvictionReason(std::string_view name);

// A derivative a round stopped following: forgotten (its advisories stay published), and kept
// in a short history so that what was dropped, and why, can be shown.
struct Eviction {
  std::string id;
  Relation relation = Relation::kFinetune;
  EvictionReason reason = EvictionReason::kRankedOut;
  std::string detail;  // one line: what decided it
  Signals signals;     // as last known
  int64_t evicted_at = 0;
};

}  // namespace hubwatch::derivatives
