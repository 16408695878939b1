// Every incident fixture (tests/fixtures, modelled on real upstream changes) ingested end to end:
// the changes and impacts each must produce.

#include <gtest/gtest.h>

#include <sstream>

#include "tests/pipeline/pipeline_env.h"

namespace hubwatch::pipeline {
namespace {

class IncidentsTest : public PipelineTest {
 protected:
  std::vector<store::ChangeRecord> Ingest(const std::string& repo) {
    Track(repo);
    const PollReport r = PollOnce(repo);
    EXPECT_TRUE(r.ok) << r.error;
    return Changes(repo);
  }
};

std::vector<const store::ChangeRecord*> OfKind(const std::vector<store::ChangeRecord>& changes,
                                               diff::ChangeKind kind) {
  std::vector<const store::ChangeRecord*> out;
  for (const auto& c : changes) {
    if (c.change.kind == kind) out.push_back(&c);
  }
  return out;
}

const store::ChangeRecord* At(const std::vector<store::ChangeRecord>& changes,
                              const std::string& sha_prefix, diff::ChangeKind kind) {
  for (const auto& c : changes) {
    if (c.sha.rfind(sha_prefix, 0) == 0 && c.change.kind == kind) return &c;
  }
  return nullptr;
}

// The rendered-prompt section of an advisory's details ("" when there is none).
std::string RenderedSection(const nlohmann::json& osv) {
  const std::string details = osv["details"].get<std::string>();
  const size_t at = details.find("\nRendered prompts: ");
  return at == std::string::npos ? "" : details.substr(at);
}

// Whether a unified diff in text adds a line containing needle.
bool AddsLineWith(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("+") && !line.starts_with("+++") &&
        line.find(needle) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// F1: Llama-3-8B-Instruct's EOS changed across generation_config, config and tokenizer_config;
// the effective EOS moved twice (ids, then the token string).
TEST_F(IncidentsTest, F1Llama3EosChangeAcrossThreeFiles) {
  const auto changes = Ingest("meta-llama/Meta-Llama-3-8B-Instruct");
  const auto* gen = At(changes, "d3db438", diff::ChangeKind::kGenerationConfig);
  ASSERT_NE(gen, nullptr);
  EXPECT_EQ(gen->change.impact, diff::Impact::kBehavioral);
  EXPECT_NE(gen->change.summary.find("eos_token_id 128001 -> [128001, 128009]"), std::string::npos);
  const auto* eos_ids = At(changes, "d3db438", diff::ChangeKind::kSpecialTokens);
  ASSERT_NE(eos_ids, nullptr);
  EXPECT_NE(eos_ids->change.summary.find("effective EOS"), std::string::npos);
  const auto* config = At(changes, "4d6c61d", diff::ChangeKind::kConfig);
  ASSERT_NE(config, nullptr);
  EXPECT_NE(config->change.summary.find("eos_token_id 128001 -> 128009"), std::string::npos);
  const auto* eos_token = At(changes, "a897769", diff::ChangeKind::kSpecialTokens);
  ASSERT_NE(eos_token, nullptr);
  EXPECT_NE(eos_token->change.summary.find("<|eot_id|>"), std::string::npos);
}

// F2: the base model's chat template was removed, then the post-processor started adding BOS.
TEST_F(IncidentsTest, F2BaseModelTemplateRemovedAndBosPostProcessor) {
  const auto changes = Ingest("meta-llama/Meta-Llama-3-8B");
  bool removed = false, post_processor = false;
  for (const auto* c : OfKind(changes, diff::ChangeKind::kChatTemplate)) {
    removed |= c->change.details.value("status", "") == "removed";
  }
  for (const auto* c : OfKind(changes, diff::ChangeKind::kTokenizer)) {
    post_processor |= c->change.summary.find("post_processor") != std::string::npos &&
                      c->change.summary.find("TemplateProcessing") != std::string::npos;
  }
  EXPECT_TRUE(removed);
  EXPECT_TRUE(post_processor);
}

// F3: Llama-3.1's config.json ships rope_scaling in the "rope_type" schema (llama3), which
// transformers releases before it refuse; the tool-calling template rewrite follows. The config
// arrives with the initial upload, which is no change (nothing before it); the schema is a
// change only when a later revision moves to it (ConfigDiff's tests).
TEST_F(IncidentsTest, F3Llama31RopeScalingSchema) {
  const auto changes = Ingest("meta-llama/Llama-3.1-8B-Instruct");
  for (const auto* c : OfKind(changes, diff::ChangeKind::kConfig)) {
    EXPECT_NE(c->change.details.value("status", ""), "added") << c->change.summary;
  }
  EXPECT_NE(At(changes, "8c22764", diff::ChangeKind::kChatTemplate), nullptr);
}

// F4: Mistral-7B-Instruct-v0.3's templates: the upload (no change: nothing before it) plus
// four rewrites, each rendered on the canonical conversations; #70 renders identically and is
// cosmetic.
TEST_F(IncidentsTest, F4MistralFourChatTemplateRewrites) {
  const auto changes = Ingest("mistralai/Mistral-7B-Instruct-v0.3");
  const auto templates = OfKind(changes, diff::ChangeKind::kChatTemplate);
  ASSERT_EQ(templates.size(), 4u);
  int behavioral = 0, cosmetic = 0;
  for (size_t i = 0; i < templates.size(); ++i) {
    EXPECT_EQ(templates[i]->change.details.value("status", ""), "changed");
    ASSERT_TRUE(templates[i]->change.details.contains("rendered"));
    (templates[i]->change.impact == diff::Impact::kBehavioral ? behavioral : cosmetic)++;
  }
  EXPECT_EQ(behavioral, 3);
  EXPECT_EQ(cosmetic, 1);
  const auto* fix70 = At(changes, "430e950", diff::ChangeKind::kChatTemplate);
  ASSERT_NE(fix70, nullptr);
  EXPECT_EQ(fix70->change.impact, diff::Impact::kCosmetic);
  // The advisories show what each rewrite does to prompts: #44's rendered multi-turn prompt
  // drops the space before [/INST] and gains one before the assistant turn.
  std::string rewrite44;
  for (const auto& a : Advisories("mistralai/Mistral-7B-Instruct-v0.3")) {
    if (a.kind == "chat_template" && a.sha == templates[0]->sha) rewrite44 = RenderedSection(a.osv);
  }
  EXPECT_NE(rewrite44.find("Conversation `multi_turn`:\n\n```diff\n--- before/multi_turn\n"),
            std::string::npos)
      << rewrite44;
  EXPECT_TRUE(AddsLineWith(rewrite44, "<s>[INST] Hello, how are you?[/INST] I'm doing great."))
      << rewrite44;
  // #51 removed the tokenizer's normalizer.
  const auto* align = At(changes, "3f73f3e", diff::ChangeKind::kTokenizer);
  ASSERT_NE(align, nullptr);
  EXPECT_NE(align->change.summary.find("normalizer"), std::string::npos);
}

// F6: Gemma's tokenizer fix flipped added-token special flags.
TEST_F(IncidentsTest, F6GemmaTokenizerFix) {
  const auto changes = Ingest("google/gemma-7b-it");
  bool flags = false;
  for (const auto* c : OfKind(changes, diff::ChangeKind::kTokenizer)) {
    flags |= c->change.summary.find("special false -> true") != std::string::npos;
  }
  EXPECT_TRUE(flags);
}

// F7: the R1 distill's generation prompt started ending in "<think>\n": visible in the rendered
// prompts, not just the template text.
TEST_F(IncidentsTest, F7DeepSeekThinkInTheGenerationPrompt) {
  const auto changes = Ingest("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B");
  const auto* c = At(changes, "6602cad", diff::ChangeKind::kChatTemplate);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->change.impact, diff::Impact::kBehavioral);
  const nlohmann::json& rendered = c->change.details["rendered"];
  ASSERT_TRUE(rendered.is_object()) << c->change.details.dump();
  bool think = false;
  for (const nlohmann::json& conv : rendered["conversations"]) {
    think |= conv.value("unified_diff", "").find("<｜Assistant｜><think>\n") != std::string::npos;
  }
  EXPECT_TRUE(think) << rendered.dump(2);
  // The advisory shows it too: in the rendered prompts, not only in the template text.
  bool advised = false, rendered_think = false;
  for (const auto& a : Advisories("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B")) {
    if (a.sha.rfind("6602cad", 0) != 0 || a.kind != "chat_template") continue;
    advised |= a.osv["details"].get<std::string>().find("<think>") != std::string::npos;
    const std::string section = RenderedSection(a.osv);
    rendered_think |= AddsLineWith(section, "<｜Assistant｜><think>") &&
                      section.find("Conversation `single_turn_generation_prompt`") ==
                          std::string::npos;  // only the first three changed prompts are shown
  }
  EXPECT_TRUE(advised);
  EXPECT_TRUE(rendered_think);
}

// F8: Phi-3's June 2024 update replaced the weights in place: new sha256, same tensors.
TEST_F(IncidentsTest, F8Phi3WeightsRefreshedInPlace) {
  const auto changes = Ingest("microsoft/Phi-3-mini-4k-instruct");
  const auto* w = At(changes, "f3421d9", diff::ChangeKind::kWeights);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->change.impact, diff::Impact::kBehavioral);
  EXPECT_NE(w->change.summary.find("values changed, shapes identical"), std::string::npos);
  EXPECT_EQ(w->change.details.value("scalars_delta", -1), 0);
  // Same shapes: the estimate did not move, so there is no estimate change.
  EXPECT_TRUE(OfKind(changes, diff::ChangeKind::kEstimate).empty());
}

}  // namespace
}  // namespace hubwatch::pipeline
