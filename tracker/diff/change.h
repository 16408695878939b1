#pragma once

// Change: one explained difference between two revisions of a model repository, the unit the
// pipeline stores and turns into one advisory. Produced by the diff engines in tracker/diff/
// and by the pipeline itself (estimate, history). Plain value type; thread-safe to read.

#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::diff {

// How much a change can hurt someone pinned to the old revision.
enum class Impact {
  kCosmetic,    // no effect on outputs (transformers_version, whitespace, _name_or_path)
  kBehavioral,  // same shapes, different outputs (token ids, rope, chat template, weight values)
  kBreaking,    // loading or shapes change (hidden_size, vocab, tensors added/removed/reshaped)
};
std::string_view ImpactName(Impact impact);  // "cosmetic", "behavioral", "breaking"
// Parses an ImpactName; nullopt when unknown.
std::optional<Impact> ParseImpact(std::string_view name);
// The more severe of the two.
inline Impact MaxImpact(Impact a, Impact b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

enum class ChangeKind {
  kConfig,            // config.json
  kGenerationConfig,  // generation_config.json
  kTokenizer,         // tokenizer.json, tokenizer_config.json (non-template keys),
                      // special_tokens_map.json, added_tokens.json
  kChatTemplate,      // the chat template, wherever it lives
  kSpecialTokens,     // the effective BOS / EOS / PAD, resolved across files
  kWeights,           // weight files and safetensors headers
  kFiles,             // tracked files added, removed, renamed
  kProcessor,         // processor / preprocessor configs
  kEstimate,          // key figures of the memory estimate moved
  kHistory,           // history rewritten (super-squash, force-push)
  kError,             // a file could not be read as what it claims to be
};
std::string_view KindName(ChangeKind kind);  // "config", "generation_config", ...
// Parses a KindName; false when unknown.
bool ParseKind(std::string_view name, ChangeKind& kind);

struct Change {
  ChangeKind kind = ChangeKind::kConfig;
  Impact impact = Impact::kCosmetic;
  std::string path;     // the file it concerns; empty for cross-file kinds
  std::string summary;  // one line, no trailing period: "eos_token_id 128001 -> [128001, 128009]"
  nlohmann::json details = nlohmann::json::object();  // structured diff, engine-specific
};

// The change the diff engines report for a file that cannot be read as what it claims to be:
// kind kError, impact behavioral, summary "<path>: <message>" (one line, at most
// kMaxSummaryBytes), details {"file", "error"} (the message cut to 4 KiB).
Change ErrorChange(std::string_view path, std::string_view message);

// Runs an engine's body and returns its changes. Engines report bad input as values; what
// throws is exhaustion (std::bad_alloc on a file too large to hold) or a bug, and either is one
// error change for `path` ("could not be diffed: ..."), never "no change".
template <class Fn>
std::vector<Change> GuardedDiff(std::string_view path, Fn&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return {ErrorChange(path, std::string("could not be diffed: ") + e.what())};
  }
}

// An engine whose changes upstream can multiply (one per named chat template, one per
// checkpoint) keeps at most max_changes: beyond that, the first max_changes - 1 and one change
// for the rest, of the kind of the first of them, the most severe impact among them, path
// `what`, summary "<N> more <what> changes: <first summaries>" and details {"changes": [up to
// 50 {kind, path, summary}], "change_count": N}. REQUIRES: max_changes >= 1.
void CapChanges(std::vector<Change>& changes, size_t max_changes, std::string_view what);

// The most a change may hold once stored or published, whatever the engine: the summary is cut
// to kMaxSummaryBytes and the details to kMaxDetailsBytes of JSON text (BoundDetails). The
// engines cap every list upstream controls well below this (first N, a count of the rest);
// these bounds are the backstop that the store and the OSV records apply.
inline constexpr size_t kMaxSummaryBytes = 512;
inline constexpr size_t kMaxDetailsBytes = 256 * 1024;

// `details` itself when its compact JSON text takes at most max_bytes; otherwise an object with
// the top-level members that fit, in order (each member of an object; the first elements of an
// array or a CapJson copy of anything else), plus "truncated": {"bytes": <the original size>,
// "left_out": [the member names not kept]}. Never throws.
nlohmann::json BoundDetails(const nlohmann::json& details, size_t max_bytes = kMaxDetailsBytes);

// `change` with its summary and details within the bounds above.
Change BoundChange(Change change);

}  // namespace hubwatch::diff
