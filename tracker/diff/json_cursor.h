#pragma once

// JsonCursor: a strict, allocation-light JSON scanner over one text buffer, for the large files
// (a 256k-token tokenizer.json is ~17 MB) where building a DOM costs more than the whole diff
// may. It reads values where they lie and hands out views into the buffer; only strings with
// escapes are decoded, into a caller-owned arena (see json_string.h).
//
// Untrusted input: every read is bounds-checked; the first failure records one error line
// ("byte 1234: expected ':'") and every later read fails. Strings are checked as JSON requires
// (no raw control characters, valid escapes, no lone surrogates) and must be valid UTF-8.
// Not thread-safe; one cursor per thread. The buffer must outlive the cursor and every view it
// returned.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tracker/diff/json_string.h"

namespace hubwatch::diff {

class JsonCursor {
 public:
  explicit JsonCursor(std::string_view text) : text_(text) {}

  size_t pos() const { return pos_; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  // True when only whitespace is left.
  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }
  // The next non-space byte, or '\0' at the end or after a failure (does not consume it).
  char Peek() {
    if (failed()) return '\0';
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  // Consumes `c` after optional whitespace; fails otherwise.
  bool Expect(char c) {
    if (!failed()) {
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == c) {
        ++pos_;
        return true;
      }
    }
    return ExpectFailed(c);
  }

  // Reads a string value. *out views the bytes in the buffer when the string has no escapes,
  // else the decoded text appended to *arena.
  bool ReadString(std::string_view* out, StringArena* arena);
  // Reads an integer (no fraction, no exponent) that fits int64_t.
  bool ReadInt64(int64_t* out);
  // Reads any JSON number.
  bool ReadDouble(double* out);
  // Skips one value of any type and sets *raw to its text. Finds the end of well-formed input;
  // it checks bracket pairing and string termination but not everything inside (the caller
  // parses what it keeps).
  bool SkipValue(std::string_view* raw);

  // Containers: after BeginObject (which consumes '{'), `while (NextMember(&first, &key, a))`
  // reads "key": and leaves the cursor at the member's value; it returns false at '}' (consumed)
  // or on failure. Arrays likewise with BeginArray / NextElement.
  bool BeginObject() { return Expect('{'); }
  bool NextMember(bool* first, std::string_view* key, StringArena* arena);
  bool BeginArray() { return Expect('['); }
  bool NextElement(bool* first);

  // Records a failure at the current position (also for callers' own checks); returns false.
  bool Fail(std::string_view what);

 private:
  // The hot path of every read: inline, as the 17 MB files spend much of their time here.
  void SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++pos_;
    }
  }
  bool ExpectFailed(char c);

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace hubwatch::diff
