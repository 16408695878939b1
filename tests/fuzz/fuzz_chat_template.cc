// libFuzzer target: the chat-template engine. Any bytes as a template, parsed with tight limits
// and rendered on two canonical conversations (multi_turn, tool_call_and_result), each twice.
// Invariants: parsing and rendering return (a prompt or an error, never a crash, hang or leak),
// are deterministic (same text or same error both times), a rendered prompt respects
// max_output_bytes, and every error has a message.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_check.h"
#include "tracker/chat_template/canonical_conversations.h"
#include "tracker/chat_template/template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hubwatch::chat_template;
  static const std::vector<Variables> conversations = [] {
    std::vector<Variables> out;
    for (const Conversation& c : CanonicalConversations()) {
      if (c.name == "multi_turn" || c.name == "tool_call_and_result") {
        out.push_back(VariablesFromJson(c.variables));
      }
    }
    return out;
  }();
  RenderOptions options;
  options.limits.max_steps = 100'000;
  options.limits.max_loop_iterations = 10'000;
  options.limits.max_output_bytes = 64 << 10;
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  hubwatch::Result<Template> parsed = Template::Parse(source, options.limits);
  if (!parsed.ok()) {
    FUZZ_CHECK(!parsed.error().message.empty(), "parse error without a message");
    return 0;
  }
  for (const Variables& variables : conversations) {
    hubwatch::Result<std::string> first = parsed->Render(variables, options);
    hubwatch::Result<std::string> second = parsed->Render(variables, options);
    FUZZ_CHECK(first.ok() == second.ok(), "rendering is not deterministic");
    if (first.ok()) {
      FUZZ_CHECK(*first == *second, "rendered prompts differ");
      FUZZ_CHECK(first->size() <= options.limits.max_output_bytes, "output over max_output_bytes");
    } else {
      FUZZ_CHECK(!first.error().message.empty(), "render error without a message");
      FUZZ_CHECK(first.error().message == second.error().message, "render errors differ");
    }
  }
  return 0;
}
