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
  std::vector<AdvisoryLag> lags;  // one per UpstreamFix checked
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
};

// Counts of derivatives by status, for one upstream advisory or over a repo's derivatives.
struct LagCounts {
  int64_t fixed = 0;
  int64_t lagging = 0;
  int64_t diverged = 0;
  int64_t not_applicable = 0;
};

}  // namespace hubwatch::derivatives
