#pragma once

// Semantic JSON diff: the RFC 6902 operations that turn one JSON document into another, each
// with the value it replaces. Documents that differ only in whitespace or key order give no
// operations; numbers compare by value (1 == 1.0). Objects are compared key by key, arrays
// element by element (index i against index i; the longer tail is added or removed); a value
// whose type changes (a scalar becoming a list, say) is one replace. Pure, thread-safe.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::diff {

enum class JsonOpKind { kAdd, kRemove, kReplace };
std::string_view JsonOpName(JsonOpKind kind);  // "add", "remove", "replace"

struct JsonOp {
  JsonOpKind op = JsonOpKind::kReplace;
  std::string path;          // JSON Pointer (RFC 6901)
  nlohmann::json old_value;  // the value removed or replaced (null for add)
  nlohmann::json new_value;  // the value added or put in place (null for remove)
};

// The operations, in an order that applies as a patch: keys in sorted order, array elements by
// index, a shrinking array's tail removed from its end. REQUIRES: nesting of both documents
// within what the stack allows (ParseJson caps it at kMaxJsonDepth).
std::vector<JsonOp> DiffJson(const nlohmann::json& before, const nlohmann::json& after);

// {"op": "replace", "path": "/eos_token_id", "old_value": 128001, "value": [128001, 128009]}: an
// RFC 6902 operation ("value" for add and replace) plus "old_value" (for remove and replace),
// which patch appliers ignore.
nlohmann::json JsonOpToJson(const JsonOp& op);

// One line for a reader: "eos_token_id 128001 -> [128001, 128009]", "rope_scaling added: {...}",
// "sliding_window removed (was 4096)". Values are cut to value_chars.
std::string DescribeOp(const JsonOp& op, size_t value_chars = 60);

}  // namespace hubwatch::diff
