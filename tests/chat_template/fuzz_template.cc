// libFuzzer target: any bytes as a template, rendered on a canonical conversation with tight
// limits. The engine must return (an error or a prompt) and never crash, hang or leak.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DHUBWATCH_CHAT_TEMPLATE_FUZZ=ON
//   cmake --build build-fuzz --target chat_template_fuzz
//   build-fuzz/bin/chat_template_fuzz -max_total_time=60 tests/chat_template/corpus/templates

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tracker/chat_template/canonical_conversations.h"
#include "tracker/chat_template/template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hubwatch::chat_template;
  static const Variables variables = [] {
    for (const Conversation& c : CanonicalConversations()) {
      if (c.name == "tool_call_and_result") return VariablesFromJson(c.variables);
    }
    return Variables();
  }();
  RenderOptions options;
  options.limits.max_steps = 200'000;
  options.limits.max_loop_iterations = 20'000;
  options.limits.max_output_bytes = 1 << 20;
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  hubwatch::Result<Template> parsed = Template::Parse(source, options.limits);
  if (parsed.ok()) {
    hubwatch::Result<std::string> rendered = parsed->Render(variables, options);
    (void)rendered;
  }
  return 0;
}
