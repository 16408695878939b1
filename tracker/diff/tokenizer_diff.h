#pragma once

// The tokenizer engine: one Change (kind kTokenizer) per tokenizer file that changed, its
// impact the most severe of its parts.
//
// tokenizer.json, by section (tokenizer_sections.h): model.vocab (tokens added / removed /
// re-numbered, counts and first examples), model.merges (counts; "a b" strings and ["a", "b"]
// pairs are the same merge), the other model fields (type: breaking; ignore_merges,
// byte_fallback, unk_token, ...), added_tokens (and their special flags), normalizer,
// pre_tokenizer, post_processor (the BOS template of TemplateProcessing), decoder, truncation,
// padding, version (cosmetic). Sections are compared byte for byte before anything is parsed,
// and only the vocab and merges that differ are read, with a scanner rather than a DOM (a
// 256k-token file diffs in well under 300 ms; BENCHMARKS.md). Details:
// {"file", "status", "sections": {name: section details}}.
//
// tokenizer_config.json: every key but chat_template (the chat-template engine's), as a
// semantic JSON diff: bos/eos/pad/unk/... tokens, add_bos_token / add_eos_token,
// model_max_length, added_tokens_decoder (an existing id's content changing is breaking),
// tokenizer_class; name_or_path and _commit_hash cosmetic, the rest behavioral. A change of
// chat_template alone is no tokenizer change.
// special_tokens_map.json: semantic diff, behavioral.
// added_tokens.json ({"token": id}): tokens added / removed behavioral, re-numbered breaking.
//
// Malformed input (invalid JSON, a tokenizer.json without a model) is a kError change naming
// the file. Pure functions, thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/diff/change.h"

namespace hubwatch::diff {

// nullopt: the file is absent at that revision.
std::vector<Change> DiffTokenizerJson(const std::optional<std::string>& before,
                                      const std::optional<std::string>& after,
                                      std::string_view path = "tokenizer.json");
std::vector<Change> DiffTokenizerConfig(const std::optional<std::string>& before,
                                        const std::optional<std::string>& after,
                                        std::string_view path = "tokenizer_config.json");
std::vector<Change> DiffSpecialTokensMap(const std::optional<std::string>& before,
                                         const std::optional<std::string>& after,
                                         std::string_view path = "special_tokens_map.json");
std::vector<Change> DiffAddedTokensJson(const std::optional<std::string>& before,
                                        const std::optional<std::string>& after,
                                        std::string_view path = "added_tokens.json");

}  // namespace hubwatch::diff
