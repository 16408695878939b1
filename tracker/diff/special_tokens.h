#pragma once

// Effective special tokens: the BOS / EOS / PAD a runtime actually uses, resolved across the
// five files that can each say something about them, and the change when that resolved value
// moves. The same fact lives in several files (the Llama-3 EOS incident changed three of them
// over several commits); what matters to someone serving the model is the value that wins.
//
// Precedence, per token (modelled on transformers and vLLM):
//   ids        the token ids generation uses (for EOS: the stop ids), a number or a list:
//              generation_config.json <x>_token_id, else config.json <x>_token_id, else
//              config.json text_config.<x>_token_id. A null value counts as not set.
//   content    the tokenizer's token string (<x>_token, a string or an AddedToken object's
//              "content"; null means none): when tokenizer_config.json has
//              "added_tokens_decoder" (transformers >= 4.34 files) tokenizer_config.json alone
//              decides; otherwise (legacy files, or no tokenizer_config.json)
//              special_tokens_map.json wins over tokenizer_config.json, as transformers' legacy
//              loading path does.
//   content_id the content's id: tokenizer.json added_tokens, else tokenizer.json model.vocab,
//              else tokenizer_config.json added_tokens_decoder.
//   added      (BOS and EOS) whether encoding inserts the token by itself: for the Llama, Code
//              Llama and Gemma tokenizer classes, add_bos_token (default true) / add_eos_token
//              (default false) in tokenizer_config.json, which those classes rebuild their
//              post-processor from; otherwise tokenizer.json's post_processor (a
//              TemplateProcessing "single" template, possibly inside a Sequence, that starts with
//              the BOS / ends with the EOS); with no tokenizer.json, add_bos_token /
//              add_eos_token if set; else unknown.
//
// DiffSpecialTokens gives one kSpecialTokens change (behavioral, path empty) per token whose
// effective value changed, separate from the per-file changes. When an input file cannot be read
// on either side (the file engines report that), no effective change is claimed. When the
// resolution itself fails (memory exhausted by a huge file) the result is one kError change for
// kSpecialTokensLabel saying why.
//
// Upstream decides how many ids a token has (a config.json can list 1.4M stop ids): a change's
// details list the first kMaxListedIds of each side with "ids_count", cut the content to 256
// bytes ("content_truncated"), and its summary shows the first ids and the count.
//
// Pure functions, thread-safe.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tracker/diff/change.h"

namespace hubwatch::diff {

inline constexpr size_t kMaxListedIds = 64;
inline constexpr char kSpecialTokensLabel[] = "special tokens";  // the path of its error changes

// The contents of one revision's files; nullopt: absent.
struct SpecialTokenFiles {
  std::optional<std::string> config = std::nullopt;              // config.json
  std::optional<std::string> generation_config = std::nullopt;   // generation_config.json
  std::optional<std::string> tokenizer_config = std::nullopt;    // tokenizer_config.json
  std::optional<std::string> special_tokens_map = std::nullopt;  // special_tokens_map.json
  std::optional<std::string> tokenizer_json = std::nullopt;      // tokenizer.json
};

struct EffectiveToken {
  std::vector<int64_t> ids;  // empty: no file sets it
  std::string ids_from;      // the file that decided, or ""
  std::optional<std::string> content;
  std::string content_from;
  std::optional<int64_t> content_id;
  std::optional<bool> added;  // BOS / EOS only
  std::string added_from;

  // Same effective value (the sources may differ).
  bool SameValue(const EffectiveToken& other) const;
};
nlohmann::json ToJson(const EffectiveToken& token);

struct EffectiveSpecialTokens {
  EffectiveToken bos;
  EffectiveToken eos;
  EffectiveToken pad;
  std::vector<std::string> unreadable;  // files present but not readable
};

EffectiveSpecialTokens ResolveSpecialTokens(const SpecialTokenFiles& files);

std::vector<Change> DiffSpecialTokens(const SpecialTokenFiles& before,
                                      const SpecialTokenFiles& after);

}  // namespace hubwatch::diff
