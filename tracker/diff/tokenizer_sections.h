#pragma once

// The section diffs of tokenizer.json (see tokenizer_diff.h for the file-level engine): each
// compares one section of two revisions and says what changed, how much it matters and how to
// say it in a line. Pure functions, thread-safe.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/base/result.h"
#include "tracker/diff/change.h"
#include "tracker/diff/tokenizer_json.h"

namespace hubwatch::diff {

struct SectionDiff {
  Impact impact = Impact::kBehavioral;
  std::string summary;  // "vocab 128000 -> 128256 tokens: +256 ..."; no file name
  nlohmann::json details = nlohmann::json::object();
};

// How many example tokens or merges a section diff lists per category.
inline constexpr size_t kSectionExamples = 5;

// model.vocab: tokens added, removed, re-numbered (an existing token at a new id: breaking,
// every stored id and fine-tune on the old ids is wrong), Unigram scores changed. nullopt when
// the vocabularies are equal.
std::optional<SectionDiff> DiffVocabSection(const Vocab& before, const Vocab& after);

// model.merges: merges added, removed, re-ranked (behavioral); the same merges in another
// format ("a b" strings vs ["a", "b"] pairs) is cosmetic. nullopt when equal.
std::optional<SectionDiff> DiffMergesSection(const Merges& before, const Merges& after);

// added_tokens: an array of {id (integer), content (string), special, ...}, or null (absent).
Status CheckAddedTokens(const nlohmann::json& tokens);

// added_tokens: tokens added, removed, re-numbered (the same content at another id) and content
// changed at the same id (both breaking), flags (special, normalized, lstrip, rstrip,
// single_word) changed. nullopt when equal. REQUIRES: CheckAddedTokens(side).ok() for both
// sides (a side that fails it counts as empty).
std::optional<SectionDiff> DiffAddedTokensSection(const nlohmann::json& before,
                                                  const nlohmann::json& after);

// normalizer, pre_tokenizer, post_processor, decoder, or any other section: described by its
// component types ("Sequence[ByteLevel, TemplateProcessing(<|begin_of_text|> $A)]") when those
// differ, else by its first changed field. nullopt when equal. Impact: cosmetic for "version",
// behavioral otherwise.
std::optional<SectionDiff> DiffComponentSection(std::string_view name, const nlohmann::json& before,
                                                const nlohmann::json& after);

// A pipeline component in one line: null -> "none", {"type": "Sequence", ...} ->
// "Sequence[A, B]", TemplateProcessing -> "TemplateProcessing(<s> $A)" (its single template).
std::string DescribeComponent(const nlohmann::json& component);

}  // namespace hubwatch::diff
