#pragma once

// The canonical conversations every chat template is rendered on, to see whether a template
// change changes prompts: single turn with and without the generation prompt, multi-turn, a
// system message, an assistant turn last, tools offered, a tool call and its result, retrieved
// documents (RAG), reasoning (<think>) in the history, non-ASCII text and quotes, and a
// role-alternation error.
//
// They are the conversations of the conformance corpus (tests/chat_template/corpus/
// conversations/*.json; a test keeps both identical).
//
// Thread-safe: the set is built once and immutable.

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace hubwatch::chat_template {

struct Conversation {
  std::string name;                  // e.g. "tool_call_and_result"
  nlohmann::ordered_json variables;  // messages, add_generation_prompt, optionally tools, documents
};

// In name order. The reference stays valid for the life of the process.
const std::vector<Conversation>& CanonicalConversations();

}  // namespace hubwatch::chat_template
