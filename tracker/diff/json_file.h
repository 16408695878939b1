#pragma once

// One JSON file at two revisions, parsed, with the cases every JSON-file engine treats alike
// decided once: identical bytes or absent on both sides is no change; a new side that does not
// parse (or is not an object) is an error change; an old side that did not parse and a new one
// that does is a "valid again" change (the old error was reported at its own revision). What
// remains for the engine is two objects, either of which may be absent. Pure, thread-safe.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/diff/change.h"
#include "tracker/diff/json_diff.h"

namespace hubwatch::diff {

struct JsonFilePair {
  std::optional<nlohmann::json> before;  // nullopt: absent
  std::optional<nlohmann::json> after;
};

// Parses both sides of `path`. Returns the pair for the engine to diff, or nullopt when
// `changes` (appended to, with kind `kind` for a "valid again" change) already says all there
// is to say.
std::optional<JsonFilePair> ParseJsonFilePair(const std::optional<std::string>& before,
                                              const std::optional<std::string>& after,
                                              std::string_view path, ChangeKind kind,
                                              std::vector<Change>& changes);

// The change for a file whose previous revision could not be read and that now reads (or is
// gone): kind `kind`, behavioral, details {"file", "status": "fixed" | "removed",
// "previous_error"}.
Change PreviouslyInvalidChange(ChangeKind kind, std::string_view path, bool present_now,
                               std::string_view previous_error);

// Classifies one operation (mostly by the JSON Pointer it touches).
using FieldClassifier = std::function<Impact(const JsonOp& op)>;

// The change for a JSON file from its semantic diff (an absent side diffs as {}), or nullopt
// when the two sides are equal. REQUIRES: pair.before or pair.after. Impact: the most severe
// op. Details: {"file", "status": "added" | "removed" | "modified", "ops": [op + "impact"]
// (an OpList: bounded), "op_count"}.
// Summary: `lead` first, then one part per top-level key (its single op, or its old -> new
// value when several ops touch it), most severe first; "added"/"removed" for a whole file.
std::optional<Change> FieldsChange(ChangeKind kind, std::string_view path, const JsonFilePair& pair,
                                   const FieldClassifier& classify,
                                   std::vector<std::string> lead = {});

}  // namespace hubwatch::diff
