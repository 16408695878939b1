#pragma once

// tokenizer.json (Hugging Face tokenizers) read section by section, without a DOM for the big
// parts. ScanTokenizerJson finds the raw text of every top-level member and of every member of
// "model" in one pass; the engines compare sections byte for byte first and parse only what
// differs: the small sections with nlohmann, the vocab and merges (most of a 17 MB file) with
// ParseVocab / ParseMerges, which keep views into the text.
//
// Untrusted input: never crashes; failures are Errors ("not a tokenizer.json: no \"model\"
// object", "model.vocab: byte 123: expected an integer"). Pure functions, thread-safe. Every
// view points into the text given (or into the result's own arena): the text must outlive the
// result.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/diff/json_cursor.h"

namespace hubwatch::diff {

struct TokenizerJsonLayout {
  using Members = std::vector<std::pair<std::string, std::string_view>>;  // key -> raw value
  Members sections;  // top-level members in file order: "version", "added_tokens", "model", ...
  Members model;     // members of "model": "type", "vocab", "merges", "unk_token", ...

  // The raw value text, or an empty view when absent (a later duplicate key wins).
  std::string_view Section(std::string_view key) const;
  std::string_view ModelField(std::string_view key) const;
};

// Checks the top-level shape (an object with a "model" object) and splits it into members.
Result<TokenizerJsonLayout> ScanTokenizerJson(std::string_view text);

// model.vocab: {"token": id, ...} (BPE, WordPiece, WordLevel) or [["token", score], ...]
// (Unigram, where the id is the position).
struct Vocab {
  std::vector<std::pair<std::string_view, int64_t>> tokens;  // file order
  std::vector<double> scores;                                // Unigram only, parallel to tokens
  bool unigram = false;
  StringArena arena;  // tokens with escapes, decoded
};
Result<Vocab> ParseVocab(std::string_view raw);

// model.merges: ["a b", ...] (tokenizers < 0.20) or [["a", "b"], ...].
enum class MergesFormat { kEmpty, kStrings, kPairs, kMixed };
std::string_view MergesFormatName(MergesFormat format);  // "empty", "strings", "pairs", "mixed"
struct Merges {
  std::vector<std::pair<std::string_view, std::string_view>> pairs;  // by rank
  MergesFormat format = MergesFormat::kEmpty;
  StringArena arena;
};
Result<Merges> ParseMerges(std::string_view raw);

}  // namespace hubwatch::diff
