#include "tracker/diff/chat_template_diff.h"

#include <algorithm>

#include "tracker/chat_template/unified_diff.h"
#include "tracker/diff/json_text.h"
#include "tracker/diff/tracked_files.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

constexpr size_t kMaxDiffBytes = 256 * 1024;  // of the unified diff kept in the details
// Named templates are upstream's to multiply: changes for at most this many, then one for the
// rest (CapChanges).
constexpr size_t kMaxTemplateChanges = 16;

// Reads a chat_template value (a string, a list of {name, template}, or null) into `set`.
// Returns an error message when it has another shape.
std::optional<std::string> ReadTemplates(const json& value, std::string_view file,
                                         ChatTemplateSet& set) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) {
    set.templates["default"] = {value.get<std::string>(), std::string(file)};
    return std::nullopt;
  }
  if (!value.is_array()) return "chat_template is neither a string nor a list of templates";
  for (const json& entry : value) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
        !entry.contains("template") || !entry["template"].is_string()) {
      return "chat_template list entry without a string \"name\" and \"template\"";
    }
    set.templates[entry["name"].get<std::string>()] = {entry["template"].get<std::string>(),
                                                       std::string(file)};
  }
  return std::nullopt;
}

void Unreadable(ChatTemplateSet& set, std::string_view file, std::string_view message) {
  set.templates.clear();
  set.known = false;
  set.errors.push_back(ErrorChange(file, message));
}

std::string Label(std::string_view name) {
  return name == "default" ? std::string("chat template")
                           : "chat template " + ShortJson(json(std::string(name)), 40);
}

std::string DiffLabel(char side, const ChatTemplate& t, std::string_view name) {
  std::string label = std::string(1, side) + "/" + t.file;
  if (name != "default") label += " (" + std::string(name) + ")";
  return label;
}

size_t CountLines(std::string_view text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

// A unified diff (tracker/chat_template's `diff -u` implementation) and what it counts.
struct UnifiedDiff {
  std::string text;
  size_t lines_added = 0;
  size_t lines_removed = 0;
  std::string first_added;  // without the marker
  std::string first_removed;
};

UnifiedDiff DiffLines(std::string_view before, std::string_view after,
                      std::string_view before_label, std::string_view after_label, size_t context) {
  UnifiedDiff diff;
  diff.text = chat_template::UnifiedDiff(before, after, before_label, after_label,
                                         static_cast<int>(std::min<size_t>(context, 1000)));
  size_t start = 0;
  for (int header = 0; header < 2 && start < diff.text.size(); ++header) {  // "---", "+++"
    start = diff.text.find('\n', start);
    start = start == std::string::npos ? diff.text.size() : start + 1;
  }
  while (start < diff.text.size()) {
    size_t end = diff.text.find('\n', start);
    if (end == std::string::npos) end = diff.text.size();
    const std::string_view line(diff.text.data() + start, end - start);
    if (line.starts_with('+')) {
      if (diff.lines_added++ == 0) diff.first_added = line.substr(1);
    } else if (line.starts_with('-')) {
      if (diff.lines_removed++ == 0) diff.first_removed = line.substr(1);
    }
    start = end + 1;
  }
  return diff;
}

// The first changed line for the summary: "+ {{ ... }}" or "- ...".
std::string FirstChangedLine(const UnifiedDiff& diff) {
  const bool added = !diff.first_added.empty();
  std::string_view line = added ? diff.first_added : diff.first_removed;
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (line.empty()) return "";
  return std::string(added ? ": + " : ": - ") + CutText(SanitizeUtf8(line), 80);
}

Change TemplateChange(std::string_view name, const ChatTemplate* before, const ChatTemplate* after,
                      const ChatTemplateFiles& before_files, const ChatTemplateFiles& after_files,
                      const ChatTemplateDiffOptions& options) {
  static const ChatTemplate kNone;
  const ChatTemplate& old_t = before ? *before : kNone;
  const ChatTemplate& new_t = after ? *after : kNone;
  Change change;
  change.kind = ChangeKind::kChatTemplate;
  change.impact = Impact::kBehavioral;
  change.path = after ? new_t.file : old_t.file;
  const UnifiedDiff diff =
      DiffLines(old_t.text, new_t.text, before ? DiffLabel('a', old_t, name) : "/dev/null",
                after ? DiffLabel('b', new_t, name) : "/dev/null", options.context_lines);
  const std::string label = Label(name);
  std::string status;
  if (!before) {
    status = "added";
    change.summary = label + " added (" + std::to_string(CountLines(new_t.text)) + " lines, in " +
                     new_t.file + ")";
  } else if (!after) {
    status = "removed";
    change.summary = label + " removed (was in " + old_t.file + ")";
  } else if (old_t.text == new_t.text) {
    status = "moved";
    change.impact = Impact::kCosmetic;
    change.summary =
        label + " moved from " + old_t.file + " to " + new_t.file + " (text identical)";
  } else {
    status = "changed";
    const std::string counts = "(+" + std::to_string(diff.lines_added) + " -" +
                               std::to_string(diff.lines_removed) + " lines)";
    change.summary = old_t.file == new_t.file ? label + " changed " + counts
                                              : label + " moved from " + old_t.file + " to " +
                                                    new_t.file + " and changed " + counts;
    change.summary += FirstChangedLine(diff);
  }
  change.details = {{"name", name},
                    {"status", status},
                    {"from", before ? json(old_t.file) : json()},
                    {"to", after ? json(new_t.file) : json()},
                    {"unified_diff", CutText(SanitizeUtf8(diff.text), kMaxDiffBytes)},
                    {"unified_diff_truncated", diff.text.size() > kMaxDiffBytes},
                    {"lines_added", diff.lines_added},
                    {"lines_removed", diff.lines_removed},
                    {"rendered", nullptr}};
  if (status == "changed" && options.compare_rendered) {
    const TemplateRevisions revisions{name, old_t, new_t, before_files, after_files};
    if (std::optional<RenderedComparison> rendered = options.compare_rendered(revisions)) {
      change.impact = rendered->impact;
      change.details["rendered"] = std::move(rendered->details);
      if (!rendered->summary.empty()) change.summary += "; rendered: " + rendered->summary;
    }
  }
  change.summary = CutText(OneLine(change.summary), 240);
  return change;
}

}  // namespace

ChatTemplateSet ExtractChatTemplates(const ChatTemplateFiles& files) {
  ChatTemplateSet set;
  if (files.chat_template_jinja) {
    set.templates["default"] = {*files.chat_template_jinja, std::string(kChatTemplateJinjaFile)};
    return set;
  }
  if (files.chat_template_json) {
    Result<json> doc = ParseJson(*files.chat_template_json);
    if (!doc.ok()) {
      Unreadable(set, kChatTemplateJsonFile, doc.error().message);
    } else if (!doc->is_object() || !doc->contains("chat_template")) {
      Unreadable(set, kChatTemplateJsonFile, "not an object with a \"chat_template\"");
    } else if (auto error = ReadTemplates((*doc)["chat_template"], kChatTemplateJsonFile, set)) {
      Unreadable(set, kChatTemplateJsonFile, *error);
    }
    return set;
  }
  if (files.tokenizer_config) {
    Result<json> doc = ParseJson(*files.tokenizer_config);
    if (!doc.ok() || !doc->is_object()) {
      set.known = false;  // the tokenizer engine reports the file
      return set;
    }
    auto it = doc->find("chat_template");
    if (it == doc->end()) return set;
    if (auto error = ReadTemplates(*it, kTokenizerConfigFile, set)) {
      Unreadable(set, kTokenizerConfigFile, *error);
    }
  }
  return set;
}

std::vector<Change> DiffChatTemplates(const ChatTemplateFiles& before,
                                      const ChatTemplateFiles& after,
                                      const ChatTemplateDiffOptions& options) {
  std::vector<Change> changes;
  try {
    const ChatTemplateSet old_set = ExtractChatTemplates(before);
    const ChatTemplateSet new_set = ExtractChatTemplates(after);
    // This revision's errors, unless the file is byte-identical (then it was reported before).
    for (const Change& error : new_set.errors) {
      const bool same = error.path == kChatTemplateJsonFile
                            ? before.chat_template_json == after.chat_template_json
                            : before.tokenizer_config == after.tokenizer_config;
      if (!same) changes.push_back(error);
    }
    if (!old_set.known || !new_set.known) return changes;
    // Rendering prompts costs; past the templates that are shown, only the text is compared.
    const size_t errors = changes.size();
    ChatTemplateDiffOptions text_only;
    text_only.context_lines = options.context_lines;
    auto add = [&](std::string_view name, const ChatTemplate* was, const ChatTemplate* now) {
      const bool shown = changes.size() - errors < kMaxTemplateChanges;
      changes.push_back(TemplateChange(name, was, now, before, after, shown ? options : text_only));
    };
    for (const auto& [name, t] : new_set.templates) {
      auto old = old_set.templates.find(name);
      const ChatTemplate* was = old == old_set.templates.end() ? nullptr : &old->second;
      if (was && was->text == t.text && was->file == t.file) continue;
      add(name, was, &t);
    }
    for (const auto& [name, t] : old_set.templates) {
      if (!new_set.templates.contains(name)) add(name, &t, nullptr);
    }
    CapChanges(changes, errors + kMaxTemplateChanges, "chat template");
  } catch (const std::exception& e) {
    changes.push_back(
        ErrorChange(kTokenizerConfigFile, std::string("could not be diffed: ") + e.what()));
  }
  return changes;
}

}  // namespace hubwatch::diff
