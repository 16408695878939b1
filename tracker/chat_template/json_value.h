#pragma once

// Conversions between template values and JSON.
//
// FromJson turns template variables (a conversation, special tokens) into values the way the
// reference does after JSON.parse: integral numbers become integers, object keys keep their
// order (array-index keys first, as JavaScript orders them).
//
// ToJson is the `tojson` filter and the printing of arrays and objects. It matches
// @huggingface/jinja, which follows Python's json.dumps(ensure_ascii=False) as transformers uses
// it: ", " and ": " separators (", " becomes "," when indenting), non-ASCII kept as is, no
// trailing newline. Numbers print the JavaScript way (1.0 prints "1").
//
// Pure functions; thread-safe.

#include <string>

#include "nlohmann/json.hpp"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

struct JsonFormat {
  int indent = 0;  // spaces per level; 0 prints on one line
  bool ensure_ascii = false;
  bool custom_separators = false;
  std::string item_separator;  // used when custom_separators
  std::string key_separator;
  bool sort_keys = false;
  // tojson prints undefined as null; printing a container ({{ [x] }}) prints "undefined".
  bool undefined_as_null = true;
};

// Appends the JSON text of v to out. Returns false (with *error set) for values JSON cannot
// hold (functions, tuples, keyword arguments) and for nesting deeper than 512 levels.
bool ToJson(const Value& v, const JsonFormat& format, std::string& out, std::string* error);

// Converts parsed JSON to a value. Nesting deeper than 512 levels becomes null.
Value FromJson(const nlohmann::ordered_json& json);

}  // namespace hubwatch::chat_template
