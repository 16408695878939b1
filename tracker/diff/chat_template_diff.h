#pragma once

// The chat-template engine: which templates a revision ships and how they changed.
//
// Where a template lives, and which one a runtime uses (transformers: a chat_template.jinja
// "clobbers any template in the config"; processors read chat_template.json):
//   1. chat_template.jinja             the "default" template
//   2. chat_template.json              {"chat_template": a string or a list of {name, template}}
//   3. tokenizer_config.json           "chat_template": a string or a list of {name, template}
// The first file present that holds a template wins; a lone string is named "default".
//
// Changes, one per named template (kind kChatTemplate): added, removed, changed (behavioral,
// with a unified line diff, 3 lines of context, `diff -u` style), and moved to another file
// with identical text (cosmetic: "moved from tokenizer_config.json to chat_template.jinja
// (text identical)"). Details: {"name", "status": "added" | "removed" | "changed" | "moved",
// "from", "to" (the files), "unified_diff", "lines_added", "lines_removed", "rendered"}.
//
// Rendered prompts: the engine does not run Jinja. ChatTemplateDiffOptions::compare_rendered,
// when set, is called for every changed template; what it returns becomes the change's impact
// (cosmetic when no rendered prompt changed), details["rendered"], and a summary suffix. The
// pipeline wires tracker/chat_template's DiffRenderedPrompts in there.
//
// Malformed input: an unreadable chat_template.json, or a chat_template in tokenizer_config.json
// of the wrong shape, is a kError change naming the file; a tokenizer_config.json that is not
// JSON at all is the tokenizer engine's to report, and its templates count as unknown (no
// change is claimed for them). Pure functions, thread-safe (as far as compare_rendered is).

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/diff/change.h"

namespace hubwatch::diff {

// The files of one revision that can hold chat templates; nullopt: absent.
struct ChatTemplateFiles {
  std::optional<std::string> tokenizer_config = std::nullopt;     // tokenizer_config.json
  std::optional<std::string> chat_template_jinja = std::nullopt;  // chat_template.jinja
  std::optional<std::string> chat_template_json = std::nullopt;   // chat_template.json
};

struct ChatTemplate {
  std::string text;
  std::string file;  // "chat_template.jinja", ...
};

// The templates a runtime would use, by name, and what could not be read.
struct ChatTemplateSet {
  std::map<std::string, ChatTemplate> templates;
  bool known = true;           // false when the winning source could not be read
  std::vector<Change> errors;  // kError changes for malformed template sources
};
ChatTemplateSet ExtractChatTemplates(const ChatTemplateFiles& files);

// What the rendered-prompt comparison says about one changed template.
struct RenderedComparison {
  Impact impact = Impact::kBehavioral;
  std::string summary;  // "3 of 10 canonical prompts changed"; appended to the change's summary
  nlohmann::json details = nlohmann::json::object();
};
struct TemplateRevisions {
  std::string_view name;
  const ChatTemplate& before;
  const ChatTemplate& after;
  const ChatTemplateFiles& before_files;  // for special tokens (bos_token, ...) and the like
  const ChatTemplateFiles& after_files;
};
using RenderedComparer = std::function<std::optional<RenderedComparison>(const TemplateRevisions&)>;

struct ChatTemplateDiffOptions {
  size_t context_lines = 3;
  RenderedComparer compare_rendered;  // optional
};

std::vector<Change> DiffChatTemplates(const ChatTemplateFiles& before,
                                      const ChatTemplateFiles& after,
                                      const ChatTemplateDiffOptions& options = {});

}  // namespace hubwatch::diff
