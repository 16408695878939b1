#pragma once

// Rendered-prompt diff: what a chat-template change does to prompts. Both revisions of a
// template are rendered on the same conversations (by default the canonical ones) and each
// conversation reports whether its prompt changed, with a unified diff of the rendered text.
// Render errors (syntax errors, raise_exception, limits) are reported as such.
//
// Impact: behavioral when any rendered prompt changed (including a conversation that renders
// on one side and fails on the other), cosmetic when none did, e.g. a whitespace-only template
// edit that renders the same. A conversation that fails on both sides counts as unchanged.
//
// This is the reusable piece the change pipeline calls for its chat-template diff.
//
// Pure (no IO, no clock: strftime_now sees RenderOptions::now); thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/chat_template/canonical_conversations.h"
#include "tracker/chat_template/template.h"

namespace hubwatch::chat_template {

enum class Impact { kCosmetic, kBehavioral };

// One revision of a chat template.
struct TemplateRevision {
  std::string source;        // the template text
  Variables special_tokens;  // bos_token, eos_token, ...: defaults the conversation may override
};

// A render of one conversation: the prompt, or why there is none.
struct RenderedPrompt {
  bool ok = false;
  std::string text;  // when ok
  Error error;       // when !ok
};

struct ConversationDiff {
  std::string conversation;
  RenderedPrompt before;
  RenderedPrompt after;
  bool changed = false;
  // Unified diff of before.text -> after.text ("--- before/<name>" ...); empty unless both
  // rendered and the prompts differ.
  std::string unified_diff;
};

struct TemplateRenderDiff {
  std::vector<ConversationDiff> conversations;  // in the order given
  Impact impact = Impact::kCosmetic;

  int changed_count() const;
};

// Renders before and after on each conversation. A template that does not parse fails every
// conversation with its parse error.
TemplateRenderDiff DiffRenderedPrompts(const TemplateRevision& before,
                                       const TemplateRevision& after,
                                       const std::vector<Conversation>& conversations,
                                       const RenderOptions& options = {});

// Same, on CanonicalConversations().
TemplateRenderDiff DiffRenderedPrompts(const TemplateRevision& before,
                                       const TemplateRevision& after,
                                       const RenderOptions& options = {});

// A plain-text report for advisory details: the impact, then per conversation "unchanged",
// "changed" with the unified diff, or the render error(s).
std::string FormatRenderDiff(const TemplateRenderDiff& diff);

std::string_view ImpactName(Impact impact);  // "behavioral" / "cosmetic"

}  // namespace hubwatch::chat_template
