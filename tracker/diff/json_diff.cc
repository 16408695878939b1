#include "tracker/diff/json_diff.h"

#include "tracker/diff/json_text.h"

namespace hubwatch::diff {
namespace {

void Diff(const nlohmann::json& before, const nlohmann::json& after, const std::string& path,
          std::vector<JsonOp>& ops) {
  if (before == after) return;
  if (before.is_object() && after.is_object()) {
    // Both are std::map-backed, so one merge walk over the sorted keys.
    auto b = before.begin();
    auto a = after.begin();
    while (b != before.end() || a != after.end()) {
      if (a == after.end() || (b != before.end() && b.key() < a.key())) {
        ops.push_back({JsonOpKind::kRemove, path + "/" + EscapePointerToken(b.key()), *b, nullptr});
        ++b;
      } else if (b == before.end() || a.key() < b.key()) {
        ops.push_back({JsonOpKind::kAdd, path + "/" + EscapePointerToken(a.key()), nullptr, *a});
        ++a;
      } else {
        Diff(*b, *a, path + "/" + EscapePointerToken(b.key()), ops);
        ++b;
        ++a;
      }
    }
    return;
  }
  if (before.is_array() && after.is_array() && before.size() <= kMaxElementwiseArray &&
      after.size() <= kMaxElementwiseArray) {
    const size_t common = std::min(before.size(), after.size());
    for (size_t i = 0; i < common; ++i) {
      Diff(before[i], after[i], path + "/" + std::to_string(i), ops);
    }
    for (size_t i = common; i < after.size(); ++i) {
      ops.push_back({JsonOpKind::kAdd, path + "/" + std::to_string(i), nullptr, after[i]});
    }
    for (size_t i = before.size(); i > common; --i) {
      ops.push_back(
          {JsonOpKind::kRemove, path + "/" + std::to_string(i - 1), before[i - 1], nullptr});
    }
    return;
  }
  ops.push_back({JsonOpKind::kReplace, path, before, after});
}

}  // namespace

std::string_view JsonOpName(JsonOpKind kind) {
  switch (kind) {
    case JsonOpKind::kAdd:
      return "add";
    case JsonOpKind::kRemove:
      return "remove";
    case JsonOpKind::kReplace:
      return "replace";
  }
  return "replace";
}

std::vector<JsonOp> DiffJson(const nlohmann::json& before, const nlohmann::json& after) {
  std::vector<JsonOp> ops;
  Diff(before, after, "", ops);
  return ops;
}

nlohmann::json JsonOpToJson(const JsonOp& op, size_t max_value_bytes) {
  constexpr size_t kMaxPathBytes = 512;
  const bool capped = max_value_bytes != SIZE_MAX;
  bool truncated = capped && op.path.size() > kMaxPathBytes;
  nlohmann::json out = {{"op", JsonOpName(op.op)},
                        {"path", truncated ? CutText(op.path, kMaxPathBytes) : op.path}};
  auto put = [&](const char* key, const char* size_key, const nlohmann::json& value) {
    if (!capped) {
      out[key] = value;
      return;
    }
    bool cut = false;
    out[key] = CapJson(value, max_value_bytes, &cut);
    if (cut && (value.is_array() || value.is_object())) out[size_key] = value.size();
    truncated = truncated || cut;
  };
  if (op.op != JsonOpKind::kRemove) put("value", "value_size", op.new_value);
  if (op.op != JsonOpKind::kAdd) put("old_value", "old_value_size", op.old_value);
  if (truncated) out["truncated"] = true;
  return out;
}

void OpList::Add(const JsonOp& op, std::string_view impact) {
  if (list_.size() >= kMaxListedOps || bytes_ >= kMaxListedOpsBytes) return;
  nlohmann::json entry = JsonOpToJson(op, kMaxOpValueBytes);
  if (!impact.empty()) entry["impact"] = impact;
  bytes_ += entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
  list_.push_back(std::move(entry));
}

std::string DescribeOp(const JsonOp& op, size_t value_chars) {
  const std::string where = DisplayPointer(op.path);
  switch (op.op) {
    case JsonOpKind::kAdd:
      return where + " added: " + ShortJson(op.new_value, value_chars);
    case JsonOpKind::kRemove:
      return where + " removed (was " + ShortJson(op.old_value, value_chars) + ")";
    case JsonOpKind::kReplace:
      break;
  }
  return where + " " + ShortJson(op.old_value, value_chars) + " -> " +
         ShortJson(op.new_value, value_chars);
}

}  // namespace hubwatch::diff
