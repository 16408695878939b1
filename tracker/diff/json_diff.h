#pragma once

// Semantic JSON diff: the RFC 6902 operations that turn one JSON document into another, each
// with the value it replaces. Documents that differ only in whitespace or key order give no
// operations; numbers compare by value (1 == 1.0). Objects are compared key by key, arrays
// element by element (index i against index i; the longer tail is added or removed) unless
// either is longer than kMaxElementwiseArray; a value whose type changes (a scalar becoming a
// list, say) is one replace. Pure, thread-safe.

#include <cstdint>
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

// Arrays longer than this (either side) that differ are one replace of the whole array, so a
// list of 1.4M token ids costs one operation, not one per element.
inline constexpr size_t kMaxElementwiseArray = 1024;

// The operations, in an order that applies as a patch: keys in sorted order, array elements by
// index, a shrinking array's tail removed from its end. REQUIRES: nesting of both documents
// within what the stack allows (ParseJson caps it at kMaxJsonDepth).
std::vector<JsonOp> DiffJson(const nlohmann::json& before, const nlohmann::json& after);

// {"op": "replace", "path": "/eos_token_id", "old_value": 128001, "value": [128001, 128009]}: an
// RFC 6902 operation ("value" for add and replace) plus "old_value" (for remove and replace),
// which patch appliers ignore. With max_value_bytes, each value is a CapJson copy of about
// that size and the path is cut to 512 bytes; an operation cut so carries "truncated": true and,
// for a cut array or object, "value_size" / "old_value_size" (its element count).
nlohmann::json JsonOpToJson(const JsonOp& op, size_t max_value_bytes = SIZE_MAX);

// Details list at most kMaxListedOps operations and stop once the listed ones take
// kMaxListedOpsBytes of JSON text; each value in them is a CapJson copy of about
// kMaxOpValueBytes, so a 1.4M-element list added to a config is listed as its first elements
// with "value_size": 1400000. The details say how many there were ("op_count").
inline constexpr size_t kMaxListedOps = 500;
inline constexpr size_t kMaxListedOpsBytes = 64 * 1024;
inline constexpr size_t kMaxOpValueBytes = 1024;

// A details list of operations within the bounds above. Not thread-safe (a local value).
class OpList {
 public:
  // Appends op (JsonOpToJson with kMaxOpValueBytes) with "impact" when given, unless the list
  // is full.
  void Add(const JsonOp& op, std::string_view impact = {});
  nlohmann::json Take() && { return std::move(list_); }

 private:
  nlohmann::json list_ = nlohmann::json::array();
  size_t bytes_ = 0;
};

// One line for a reader: "eos_token_id 128001 -> [128001, 128009]", "rope_scaling added: {...}",
// "sliding_window removed (was 4096)". Values are cut to value_chars.
std::string DescribeOp(const JsonOp& op, size_t value_chars = 60);

}  // namespace hubwatch::diff
