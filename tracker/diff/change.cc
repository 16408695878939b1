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
  Change change;
  change.kind = ChangeKind::kError;
  change.impact = Impact::kBehavioral;
  change.path = SanitizeUtf8(path);
  change.summary = OneLine(change.path + ": " + std::string(message));
  change.details = {{"file", change.path}, {"error", SanitizeUtf8(message)}};
  return change;
}

}  // namespace hubwatch::diff
