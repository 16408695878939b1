#include "tracker/diff/change.h"

#include "tracker/diff/json_text.h"

namespace hubwatch::diff {
namespace {

constexpr std::string_view kKindNames[] = {
    "config", "generation_config", "tokenizer", "chat_template", "special_tokens", "weights",
    "files",  "processor",         "estimate",  "history",       "error",
};

}  // namespace

std::string_view ImpactName(Impact impact) {
  switch (impact) {
    case Impact::kCosmetic:
      return "cosmetic";
    case Impact::kBehavioral:
      return "behavioral";
    case Impact::kBreaking:
      return "breaking";
  }
  return "cosmetic";
}

std::optional<Impact> ParseImpact(std::string_view name) {
  for (Impact i : {Impact::kCosmetic, Impact::kBehavioral, Impact::kBreaking}) {
    if (ImpactName(i) == name) return i;
  }
  return std::nullopt;
}

std::string_view KindName(ChangeKind kind) { return kKindNames[static_cast<int>(kind)]; }

bool ParseKind(std::string_view name, ChangeKind& kind) {
  for (size_t i = 0; i < std::size(kKindNames); ++i) {
    if (kKindNames[i] == name) {
      kind = static_cast<ChangeKind>(i);
      return true;
    }
  }
  return false;
}

Change ErrorChange(std::string_view path, std::string_view message) {
  constexpr size_t kMaxErrorBytes = 4096;
  const std::string_view head = message.substr(0, kMaxErrorBytes + 4);
  Change change;
  change.kind = ChangeKind::kError;
  change.impact = Impact::kBehavioral;
  change.path = CutText(SanitizeUtf8(path.substr(0, kMaxSummaryBytes + 4)), kMaxSummaryBytes);
  change.summary = CutText(OneLine(change.path + ": " + std::string(head)), kMaxSummaryBytes);
  change.details = {{"file", change.path}, {"error", CutText(SanitizeUtf8(head), kMaxErrorBytes)}};
  return change;
}

void CapChanges(std::vector<Change>& changes, size_t max_changes, std::string_view what) {
  if (changes.size() <= max_changes) return;
  const size_t keep = max_changes - 1;
  Change rest;
  rest.kind = changes[keep].kind;
  rest.impact = Impact::kCosmetic;
  rest.path = std::string(what);
  CappedList listed(50, 512);
  std::vector<std::string> parts;
  for (size_t i = keep; i < changes.size(); ++i) {
    const Change& c = changes[i];
    rest.impact = MaxImpact(rest.impact, c.impact);
    listed.Add({{"kind", KindName(c.kind)}, {"path", c.path}, {"summary", c.summary}});
    if (parts.size() < 4) parts.push_back(c.summary);
  }
  const size_t count = changes.size() - keep;
  rest.summary =
      std::to_string(count) + " more " + std::string(what) + " changes: " + JoinSummary(parts, 240);
  rest.details = {{"changes", listed.items()}, {"change_count", count}};
  changes.resize(keep);
  changes.push_back(std::move(rest));
}

nlohmann::json BoundDetails(const nlohmann::json& details, size_t max_bytes) {
  auto dump = [](const nlohmann::json& v) {
    return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  const size_t bytes = dump(details).size();
  if (bytes <= max_bytes) return details;
  // Room for the "truncated" note and the names it lists.
  const size_t budget = max_bytes > 8192 ? max_bytes - 8192 : max_bytes / 2;
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json left_out = nlohmann::json::array();
  size_t used = 0;
  if (details.is_object()) {
    for (auto it = details.begin(); it != details.end(); ++it) {
      const size_t member = it.key().size() + 4 + dump(*it).size();
      if (used + member <= budget) {
        out[it.key()] = *it;
        used += member;
      } else if (left_out.size() < 64) {
        left_out.push_back(CutText(SanitizeUtf8(it.key()), 128));
      }
    }
  } else {
    bool cut = false;
    out["value"] = CapJson(details, budget, &cut);
  }
  out["truncated"] = {{"bytes", bytes}, {"left_out", std::move(left_out)}};
  return out;
}

Change BoundChange(Change change) {
  if (change.summary.size() > kMaxSummaryBytes) {
    change.summary = CutText(std::move(change.summary), kMaxSummaryBytes);
  }
  change.details = BoundDetails(change.details);
  return change;
}

}  // namespace hubwatch::diff
