#include "tracker/chat_template/render_diff.h"

#include <utility>

#include "tracker/chat_template/unified_diff.h"

namespace hubwatch::chat_template {
namespace {

RenderedPrompt RenderOne(const Result<Template>& parsed, const Variables& defaults,
                         const Variables& conversation, const RenderOptions& options) {
  RenderedPrompt prompt;
  if (!parsed.ok()) {
    prompt.error = parsed.error();
    return prompt;
  }
  Result<std::string> rendered = parsed->Render(OverlayVariables(defaults, conversation), options);
  if (!rendered.ok()) {
    prompt.error = rendered.error();
    return prompt;
  }
  prompt.ok = true;
  prompt.text = std::move(rendered).value();
  return prompt;
}

}  // namespace

int TemplateRenderDiff::changed_count() const {
  int n = 0;
  for (const ConversationDiff& c : conversations) n += c.changed ? 1 : 0;
  return n;
}

TemplateRenderDiff DiffRenderedPrompts(const TemplateRevision& before,
                                       const TemplateRevision& after,
                                       const std::vector<Conversation>& conversations,
                                       const RenderOptions& options) {
  const Result<Template> before_template = Template::Parse(before.source, options.limits);
  const Result<Template> after_template = Template::Parse(after.source, options.limits);
  TemplateRenderDiff diff;
  for (const Conversation& conversation : conversations) {
    const Variables variables = VariablesFromJson(conversation.variables);
    ConversationDiff c;
    c.conversation = conversation.name;
    c.before = RenderOne(before_template, before.special_tokens, variables, options);
    c.after = RenderOne(after_template, after.special_tokens, variables, options);
    if (c.before.ok && c.after.ok) {
      c.changed = c.before.text != c.after.text;
      c.unified_diff = UnifiedDiff(c.before.text, c.after.text, "before/" + c.conversation,
                                   "after/" + c.conversation);
    } else {
      c.changed = c.before.ok != c.after.ok;
    }
    if (c.changed) diff.impact = Impact::kBehavioral;
    diff.conversations.push_back(std::move(c));
  }
  return diff;
}

TemplateRenderDiff DiffRenderedPrompts(const TemplateRevision& before,
                                       const TemplateRevision& after,
                                       const RenderOptions& options) {
  return DiffRenderedPrompts(before, after, CanonicalConversations(), options);
}

std::string_view ImpactName(Impact impact) {
  return impact == Impact::kBehavioral ? "behavioral" : "cosmetic";
}

std::string FormatRenderDiff(const TemplateRenderDiff& diff) {
  std::string out = "impact: " + std::string(ImpactName(diff.impact)) + " (" +
                    std::to_string(diff.changed_count()) + " of " +
                    std::to_string(diff.conversations.size()) + " rendered prompts changed)\n";
  for (const ConversationDiff& c : diff.conversations) {
    out += "\n" + c.conversation + ": ";
    if (c.before.ok && c.after.ok) {
      out += c.changed ? "changed\n" + c.unified_diff : "unchanged\n";
      continue;
    }
    if (!c.before.ok && !c.after.ok) {
      out += "render error before and after (unchanged)\n  before: " + c.before.error.message +
             "\n  after:  " + c.after.error.message + "\n";
    } else if (!c.after.ok) {
      out += "changed: now fails to render\n  after: " + c.after.error.message + "\n";
    } else {
      out += "changed: rendered, previously failed\n  before: " + c.before.error.message + "\n";
    }
  }
  return out;
}

}  // namespace hubwatch::chat_template
