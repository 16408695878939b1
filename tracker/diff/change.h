#pragma once

// Change: one explained difference between two revisions of a model repository, the unit the
// pipeline stores and turns into one advisory. Produced by the diff engines in tracker/diff/
// and by the pipeline itself (estimate, history). Plain value type; thread-safe to read.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace hubwatch::diff {

// How much a change can hurt someone pinned to the old revision.
enum class Impact {
  kCosmetic,    // no effect on outputs (transformers_version, whitespace, _name_or_path)
  kBehavioral,  // same shapes, different outputs (token ids, rope, chat template, weight values)
  kBreaking,    // loading or shapes change (hidden_size, vocab, tensors added/removed/reshaped)
};
std::string_view ImpactName(Impact impact);  // "cosmetic", "behavioral", "breaking"
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
// kind kError, impact behavioral, summary "<path>: <message>", details {"file", "error"}.
Change ErrorChange(std::string_view path, std::string_view message);

}  // namespace hubwatch::diff
