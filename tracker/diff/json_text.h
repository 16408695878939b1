#pragma once

// JSON text helpers shared by the diff engines: parsing untrusted text into a DOM without
// exceptions escaping, and rendering values short enough for a one-line summary. Pure,
// thread-safe.

#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::diff {

// Deeper nesting than this is refused before parsing (the engines recurse over the DOM).
inline constexpr int kMaxJsonDepth = 256;

// Parses untrusted JSON text. Errors are one line: "invalid JSON at byte 17: ...", "JSON nested
// deeper than 256 levels".
Result<nlohmann::json> ParseJson(std::string_view text);

// Compact one-line rendering for summaries: arrays as [1, 2], objects as {"k": 1}, strings
// quoted; cut to max_chars with "..." when longer. Never throws (invalid UTF-8 is replaced).
std::string ShortJson(const nlohmann::json& value, size_t max_chars = 60);

// Length of the valid UTF-8 sequence starting at text[i] (REQUIRES: i < text.size()), or 0
// when none starts there (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
// ASCII bytes are sequences of length 1.
size_t Utf8SequenceLength(std::string_view text, size_t i);

// text with every byte that does not belong to a valid UTF-8 sequence replaced by U+FFFD, so
// that it can go into JSON (error messages quote input).
std::string SanitizeUtf8(std::string_view text);

// text as one printable line for a summary: valid UTF-8 (see SanitizeUtf8), control
// characters written as \n, \r, \t or \xNN.
std::string OneLine(std::string_view text);

// text itself when at most max_chars bytes, else its start (cut at a UTF-8 boundary) and "...",
// max_chars bytes in all.
std::string CutText(std::string text, size_t max_chars);

// Strings longer than this are cut (CutText) when CapJson copies them.
inline constexpr size_t kMaxCappedStringBytes = 256;

// A copy of `value` whose compact JSON text takes about max_bytes at most (max_bytes plus one
// cut string and the closing brackets), for details whose size upstream controls: arrays and
// objects keep their first members while the budget lasts, strings are cut to
// kMaxCappedStringBytes, object keys too. `*truncated` is set when anything was left out or
// cut (REQUIRES: truncated non-null); it is never cleared. Costs O(max_bytes), whatever the
// size of `value`. Never throws.
nlohmann::json CapJson(const nlohmann::json& value, size_t max_bytes, bool* truncated);

// A details list whose length upstream decides (tensors added, tokens removed, files renamed):
// the first max_items items, each member of an object item (or the whole item otherwise) a
// CapJson copy of about max_member_bytes, and how many items there were; the first item is
// also kept whole, for a summary to quote (through ShortJson). Not thread-safe (a local value).
class CappedList {
 public:
  CappedList(size_t max_items, size_t max_member_bytes)
      : max_items_(max_items), max_member_bytes_(max_member_bytes) {}
  void Add(const nlohmann::json& item);
  size_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  const nlohmann::json& items() const { return items_; }  // at most max_items
  const nlohmann::json& first() const { return first_; }  // REQUIRES: !empty()

 private:
  size_t max_items_;
  size_t max_member_bytes_;
  size_t count_ = 0;
  nlohmann::json items_ = nlohmann::json::array();
  nlohmann::json first_;
};

// The lists as details show them: {"<name>": items, "<name>_count": count, ...}.
nlohmann::json ListsJson(
    std::initializer_list<std::pair<std::string_view, const CappedList*>> lists);

// A JSON Pointer as a reader would write the path: "/rope_scaling/rope_type" ->
// "rope_scaling.rope_type", "/eos_token_id/1" -> "eos_token_id[1]", "" -> "(root)".
std::string DisplayPointer(std::string_view pointer);

// Escapes one JSON Pointer reference token (RFC 6901): "~" -> "~0", "/" -> "~1".
std::string EscapePointerToken(std::string_view token);

// Joins summary parts with "; ", stopping before max_chars and ending "; +N more" when parts
// were left out. Always keeps the first part (cut with "..." if it alone is too long).
std::string JoinSummary(const std::vector<std::string>& parts, size_t max_chars = 200);

}  // namespace hubwatch::diff
