// Render time per template x conversation (target: under 50 us for typical templates).
// The template is parsed once and the conversation converted once, as the change pipeline does;
// BM_ParseAndRender adds the parse.

#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "tests/chat_template/testdata.h"
#include "tracker/chat_template/canonical_conversations.h"
#include "tracker/chat_template/render_diff.h"
#include "tracker/chat_template/template.h"

namespace hubwatch::chat_template {
namespace {

struct Case {
  std::string source;
  Variables variables;
};

Case Load(const std::string& template_id, const std::string& conversation) {
  TemplateRevision revision = testdata::CorpusTemplate(template_id);
  Variables conversation_variables;
  for (const Conversation& k : CanonicalConversations()) {
    if (k.name == conversation) conversation_variables = VariablesFromJson(k.variables);
  }
  return {std::move(revision.source),
          OverlayVariables(revision.special_tokens, conversation_variables)};
}

void BM_Render(benchmark::State& state, const std::string& template_id,
               const std::string& conversation) {
  const Case c = Load(template_id, conversation);
  Result<Template> parsed = Template::Parse(c.source);
  if (!parsed.ok()) {
    state.SkipWithError(parsed.error().message.c_str());
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    Result<std::string> prompt = parsed->Render(c.variables);
    if (!prompt.ok()) {
      state.SkipWithError(prompt.error().message.c_str());
      return;
    }
    bytes = prompt->size();
    benchmark::DoNotOptimize(prompt);
  }
  state.counters["prompt_bytes"] = static_cast<double>(bytes);
}

void BM_Parse(benchmark::State& state, const std::string& template_id) {
  const std::string source = testdata::CorpusTemplate(template_id).source;
  for (auto _ : state) {
    Result<Template> parsed = Template::Parse(source);
    benchmark::DoNotOptimize(parsed);
  }
  state.counters["template_bytes"] = static_cast<double>(source.size());
}

// The pipeline's unit of work: both revisions parsed and rendered on the 11 canonical
// conversations, with unified diffs.
void BM_DiffRenderedPrompts(benchmark::State& state, const std::string& before,
                            const std::string& after) {
  const TemplateRevision old_revision = testdata::CorpusTemplate(before);
  const TemplateRevision new_revision = testdata::CorpusTemplate(after);
  for (auto _ : state) {
    TemplateRenderDiff diff = DiffRenderedPrompts(old_revision, new_revision);
    benchmark::DoNotOptimize(diff);
  }
}

// Typical templates on conversations they render (tool templates on tool conversations).
struct Pair {
  const char* template_id;
  const char* conversation;
};
constexpr Pair kPairs[] = {
    {"teknium-OpenHermes-2.5-Mistral-7B", "multi_turn"},  // ChatML
    {"google-gemma-2-2b-it", "multi_turn"},
    {"mistralai-Mistral-7B-Instruct-v0.1", "multi_turn"},
    {"mistralai-Mistral-Large-Instruct-2407-v3", "multi_turn"},
    {"mistralai-Mistral-Large-Instruct-2407-v3", "tool_call_and_result"},
    {"meta-llama-Llama-3.3-70B-Instruct", "system_message"},
    {"meta-llama-Llama-3.3-70B-Instruct", "tool_call_and_result"},
    {"Qwen-Qwen2.5-7B-Instruct", "system_message"},
    {"Qwen-Qwen2.5-7B-Instruct", "tool_call_and_result"},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "reasoning_history"},
    {"Qwen-Qwen3-0.6B", "reasoning_history"},
    {"CohereForAI-c4ai-command-r-plus-tool_use", "tools_available"},
};
constexpr const char* kParsed[] = {"teknium-OpenHermes-2.5-Mistral-7B",
                                   "meta-llama-Llama-3.3-70B-Instruct",
                                   "CohereForAI-c4ai-command-r-plus-tool_use"};

[[maybe_unused]] const bool kRegistered = [] {
  for (const Pair& p : kPairs) {
    benchmark::RegisterBenchmark(
        (std::string("BM_Render/") + p.template_id + "/" + p.conversation).c_str(), BM_Render,
        p.template_id, p.conversation)
        ->Unit(benchmark::kMicrosecond);
  }
  for (const char* t : kParsed) {
    benchmark::RegisterBenchmark((std::string("BM_Parse/") + t).c_str(), BM_Parse, t)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("BM_DiffRenderedPrompts/F7-deepseek-think", BM_DiffRenderedPrompts,
                               "deepseek-ai-DeepSeek-R1-Distill-Llama-8B",
                               "fixture-f7-deepseek-r1-distill-think")
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_DiffRenderedPrompts/F4-mistral-v3", BM_DiffRenderedPrompts,
                               "mistralai-Mixtral-8x7B-Instruct-v0.1-original",
                               "mistralai-Mistral-Large-Instruct-2407-v3")
      ->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
}  // namespace hubwatch::chat_template

BENCHMARK_MAIN();
