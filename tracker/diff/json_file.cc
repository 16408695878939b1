#include "tracker/diff/json_file.h"

#include <algorithm>

#include "tracker/diff/json_diff.h"
#include "tracker/diff/json_text.h"

namespace hubwatch::diff {
namespace {

Result<nlohmann::json> ParseObject(std::string_view text) {
  Result<nlohmann::json> doc = ParseJson(text);
  if (doc.ok() && !doc->is_object()) {
    return Error::InvalidInput(std::string("not a JSON object (a JSON ") + doc->type_name() + ")");
  }
  return doc;
}

// The first reference token of a pointer, unescaped.
std::string TopKey(std::string_view pointer) {
  const size_t end = pointer.find('/', 1);
  return DisplayPointer(pointer.substr(0, end));
}

}  // namespace

Change PreviouslyInvalidChange(ChangeKind kind, std::string_view path, bool present_now,
                               std::string_view previous_error) {
  Change change;
  change.kind = kind;
  change.impact = Impact::kBehavioral;
  change.path = std::string(path);
  change.summary = present_now ? "readable again (the previous revision's file was invalid)"
                               : "invalid file removed";
  change.details = {{"file", path},
                    {"status", present_now ? "fixed" : "removed"},
                    {"previous_error", SanitizeUtf8(previous_error)}};
  return change;
}

std::optional<JsonFilePair> ParseJsonFilePair(const std::optional<std::string>& before,
                                              const std::optional<std::string>& after,
                                              std::string_view path, ChangeKind kind,
                                              std::vector<Change>& changes) {
  if (before == after) return std::nullopt;
  JsonFilePair pair;
  if (after) {
    Result<nlohmann::json> doc = ParseObject(*after);
    if (!doc.ok()) {
      changes.push_back(ErrorChange(path, doc.error().message));
      return std::nullopt;
    }
    pair.after = std::move(doc).value();
  }
  if (before) {
    Result<nlohmann::json> doc = ParseObject(*before);
    if (!doc.ok()) {
      changes.push_back(
          PreviouslyInvalidChange(kind, path, pair.after.has_value(), doc.error().message));
      return std::nullopt;
    }
    pair.before = std::move(doc).value();
  }
  return pair;
}

std::optional<Change> FieldsChange(ChangeKind kind, std::string_view path, const JsonFilePair& pair,
                                   const FieldClassifier& classify, std::vector<std::string> lead) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json& before = pair.before ? *pair.before : kEmpty;
  const nlohmann::json& after = pair.after ? *pair.after : kEmpty;
  const std::vector<JsonOp> ops = DiffJson(before, after);
  const char* status = !pair.before ? "added" : !pair.after ? "removed" : "modified";
  if (ops.empty() && pair.before && pair.after) return std::nullopt;

  Change change;
  change.kind = kind;
  change.path = std::string(path);
  change.impact = Impact::kCosmetic;
  OpList op_list;
  // Top-level keys in first-seen order, with their ops and most severe impact.
  struct Group {
    std::string key;
    std::vector<size_t> ops;
    Impact impact = Impact::kCosmetic;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Impact impact = classify(ops[i]);
    change.impact = MaxImpact(change.impact, impact);
    op_list.Add(ops[i], ImpactName(impact));
    const std::string key = TopKey(ops[i].path);
    if (groups.empty() || groups.back().key != key) groups.push_back({key, {}, Impact::kCosmetic});
    groups.back().ops.push_back(i);
    groups.back().impact = MaxImpact(groups.back().impact, impact);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return static_cast<int>(a.impact) > static_cast<int>(b.impact);
  });
  std::vector<std::string> parts = std::move(lead);
  if (!pair.before || !pair.after) {
    parts.push_back(std::string("file ") + status);
  } else {
    for (const Group& group : groups) {
      if (group.ops.size() == 1) {
        parts.push_back(DescribeOp(ops[group.ops.front()]));
        continue;
      }
      const std::string pointer = "/" + EscapePointerToken(group.key);
      JsonOp whole{JsonOpKind::kReplace, pointer, before.value(group.key, nlohmann::json()),
                   after.value(group.key, nlohmann::json())};
      parts.push_back(DescribeOp(whole));
    }
  }
  change.summary = JoinSummary(parts);
  change.details = {{"file", path},
                    {"status", status},
                    {"ops", std::move(op_list).Take()},
                    {"op_count", ops.size()}};
  return change;
}

}  // namespace hubwatch::diff
