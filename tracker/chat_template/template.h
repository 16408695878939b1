#pragma once

// hubwatch::chat_template::Template: a Jinja engine for Hugging Face chat templates.
//
// Conformance target: @huggingface/jinja 0.5.13 (the Hub's own JavaScript implementation),
// configured as transformers configures Jinja (trim_blocks and lstrip_blocks on). Outputs are
// checked byte for byte against it by tests/chat_template (the conformance corpus); where the
// reference fails, the engine fails too (an Error, never a crash).
//
// A template is untrusted input. Rendering does no IO, reads no clock (strftime_now formats
// RenderOptions::now) and stays within RenderOptions::limits; anything else is an Error whose
// message names the construct and its line and column, e.g.
//   "line 3, column 18: filter 'trim': cannot apply to NullValue".
// Error codes: kInvalidInput (syntax and runtime errors, raise_exception), kUnsupported (a Jinja
// construct the engine does not implement), kOverflow (a limit was reached).
//
// Thread safety: a Template is immutable after Parse; Render may run concurrently on one
// Template from many threads. Copies are cheap (the syntax tree is shared).
//
// DIVERGENCES from the reference (deliberate; all documented in tests/chat_template/README.md):
//  - filters `count` (alias of length) and `escape` (HTML escaping) and the statement
//    {% raw %}...{% endraw %} are implemented because the issue requires them; the reference
//    rejects them. (trim_blocks / lstrip_blocks, being textual, also apply inside raw blocks.)
//  - upper/lower/capitalize/title and case-insensitive sorting map ASCII letters only.
//  - tojson(sort_keys=true) orders keys case-insensitively (lower case first on ties) instead
//    of by the JavaScript engine's locale collation.
//  - a lone UTF-16 surrogate (indexing into the middle of an astral character, "\ud83d" in a
//    literal) becomes U+FFFD; printing a function is an error (the reference prints its
//    JavaScript source); range() takes numbers only.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"
#include "nlohmann/json.hpp"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

// Wall-clock time as strftime_now formats it.
struct CivilTime {
  int year = 2024;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  int second = 0;
};

struct Limits {
  int max_nesting = 64;                       // syntax nesting (parentheses, blocks)
  int max_call_depth = 64;                    // macro recursion
  int64_t max_loop_iterations = 100'000;      // summed over all loops of one render
  int64_t max_steps = 10'000'000;             // evaluation steps of one render
  size_t max_output_bytes = 8 * 1024 * 1024;  // the prompt, and any string or collection
};

struct RenderOptions {
  Limits limits;
  CivilTime now;
};

// Template variables (messages, tools, bos_token, add_generation_prompt, ...), in order.
using Variables = std::vector<std::pair<std::string, Value>>;

// Converts a JSON object's members to variables. REQUIRES: object.is_object().
Variables VariablesFromJson(const nlohmann::ordered_json& object);

// defaults with overrides applied: a name in both takes the override's value (and keeps the
// default's place).
Variables OverlayVariables(const Variables& defaults, const Variables& overrides);

struct Program;

class Template {
 public:
  // Parses source. Fails on syntax errors, unsupported statements and excessive nesting.
  static Result<Template> Parse(std::string_view source, const Limits& limits = {});

  // Renders with the given variables. A variable may not redefine a global (true, false, none,
  // True, False, None, namespace, range, raise_exception, strftime_now): that is an error, as
  // in the reference.
  Result<std::string> Render(const Variables& variables, const RenderOptions& options = {}) const;

  const std::string& source() const;

 private:
  explicit Template(std::shared_ptr<const Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const Program> program_;
};

}  // namespace hubwatch::chat_template
