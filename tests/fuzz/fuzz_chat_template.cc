// libFuzzer target: the chat-template engine. It wraps tests/chat_template/fuzz_template.cc
// (any bytes as a template, parsed and rendered on a canonical conversation with tight limits;
// its entry point is renamed and called first) and adds invariants: parsing and rendering are
// deterministic (same result, same text or same error, twice), a rendered prompt respects
// max_output_bytes, and every error has a message.

#define LLVMFuzzerTestOneInput HubwatchChatTemplateFuzzOne
#include "tests/chat_template/fuzz_template.cc"
#undef LLVMFuzzerTestOneInput

#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hubwatch::chat_template;
  HubwatchChatTemplateFuzzOne(data, size);

  static const Variables variables = [] {
    for (const Conversation& c : CanonicalConversations()) {
      if (c.name == "multi_turn") return VariablesFromJson(c.variables);
    }
    return Variables();
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
  return 0;
}
