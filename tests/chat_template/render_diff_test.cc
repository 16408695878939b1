// The rendered-prompt diff on real template changes (F4 Mistral v0.3, F7 DeepSeek-R1 <think>,
// a whitespace-only edit), on render errors, and the unified diff format.

#include "tracker/chat_template/render_diff.h"

#include <filesystem>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/chat_template/testdata.h"
#include "tracker/chat_template/canonical_conversations.h"
#include "tracker/chat_template/unified_diff.h"

namespace hubwatch::chat_template {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::ordered_json;

const fs::path kCorpus = testdata::CorpusDir();
using testdata::ReadFile;

TemplateRevision CorpusTemplate(const std::string& id) {
  TemplateRevision revision = testdata::CorpusTemplate(id);
  EXPECT_FALSE(revision.source.empty()) << "no corpus template " << id;
  return revision;
}

std::set<std::string> Changed(const TemplateRenderDiff& diff) {
  std::set<std::string> names;
  for (const ConversationDiff& c : diff.conversations) {
    if (c.changed) names.insert(c.conversation);
  }
  return names;
}

const ConversationDiff& Find(const TemplateRenderDiff& diff, const std::string& name) {
  for (const ConversationDiff& c : diff.conversations) {
    if (c.conversation == name) return c;
  }
  ADD_FAILURE() << "no conversation " << name;
  return diff.conversations.front();
}

TEST(CanonicalConversations, MatchTheConformanceCorpus) {
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus / "conversations"))
    files += entry.path().extension() == ".json";
  EXPECT_EQ(CanonicalConversations().size(), files);
  for (const Conversation& c : CanonicalConversations()) {
    const fs::path file = kCorpus / "conversations" / (c.name + ".json");
    ASSERT_TRUE(fs::exists(file)) << file;
    EXPECT_EQ(c.variables, Json::parse(ReadFile(file))) << c.name;
  }
}

TEST(RenderDiff, F7DeepSeekThinkChangesEveryGenerationPrompt) {
  const TemplateRenderDiff diff =
      DiffRenderedPrompts(CorpusTemplate("deepseek-ai-DeepSeek-R1-Distill-Llama-8B"),
                          CorpusTemplate("fixture-f7-deepseek-r1-distill-think"));
  EXPECT_EQ(diff.impact, Impact::kBehavioral);
  // Only conversations that ask for the generation prompt change.
  for (const ConversationDiff& c : diff.conversations) {
    const Conversation* conversation = nullptr;
    for (const Conversation& k : CanonicalConversations())
      conversation = k.name == c.conversation ? &k : conversation;
    ASSERT_NE(conversation, nullptr);
    EXPECT_EQ(c.changed, conversation->variables["add_generation_prompt"].get<bool>())
        << c.conversation;
  }
  EXPECT_EQ(
      Find(diff, "single_turn_generation_prompt").unified_diff,
      "--- before/single_turn_generation_prompt\n"
      "+++ after/single_turn_generation_prompt\n"
      "@@ -1 +1 @@\n"
      "-<｜begin▁of▁sentence｜><｜User｜>What is the capital of France?<｜Assistant｜>\n"
      "\\ No newline at end of file\n"
      "+<｜begin▁of▁sentence｜><｜User｜>What is the capital of France?<｜Assistant｜><think>\n");
  EXPECT_THAT(FormatRenderDiff(diff),
              HasSubstr("impact: behavioral (9 of 11 rendered prompts changed)"));
}

TEST(RenderDiff, F4MistralV03ToolTemplateChangesPromptsAndAcceptsSystemMessages) {
  const TemplateRenderDiff diff =
      DiffRenderedPrompts(CorpusTemplate("mistralai-Mixtral-8x7B-Instruct-v0.1-original"),
                          CorpusTemplate("mistralai-Mistral-Large-Instruct-2407-v3"));
  EXPECT_EQ(diff.impact, Impact::kBehavioral);
  // The release template rejected system messages; the v3 template folds them into the last
  // user turn.
  const ConversationDiff& system = Find(diff, "system_message");
  EXPECT_FALSE(system.before.ok);
  EXPECT_THAT(system.before.error.message, HasSubstr("Conversation roles must alternate"));
  ASSERT_TRUE(system.after.ok) << system.after.error.message;
  EXPECT_THAT(
      system.after.text,
      HasSubstr(
          "[INST] You are a concise assistant. Answer in one sentence.\n\nAnd at sunset?[/INST]"));
  EXPECT_TRUE(system.changed);
  // "[INST] x [/INST]" became "[INST] x[/INST]" and assistant turns gained a leading space.
  const ConversationDiff& multi = Find(diff, "multi_turn");
  EXPECT_TRUE(multi.changed);
  EXPECT_THAT(multi.unified_diff,
              HasSubstr("-<s>[INST] Hello, how are you? [/INST]I'm doing great."));
  EXPECT_THAT(multi.unified_diff,
              HasSubstr("+<s>[INST] Hello, how are you?[/INST] I'm doing great."));
  // Tools now reach the prompt.
  const ConversationDiff& tools = Find(diff, "tools_available");
  EXPECT_TRUE(tools.changed);
  EXPECT_THAT(tools.unified_diff, HasSubstr("+<s>[AVAILABLE_TOOLS] [{\"type\": \"function\", "
                                            "\"function\": {\"name\": \"get_current_weather\""));
  EXPECT_THAT(FormatRenderDiff(diff),
              HasSubstr("system_message: changed: rendered, previously failed"));
}

TEST(RenderDiff, WhitespaceOnlyTemplateEditIsCosmetic) {
  const TemplateRevision before = CorpusTemplate("Qwen-Qwen2.5-7B-Instruct");
  const TemplateRevision after = CorpusTemplate("fixture-qwen2.5-reindented");
  ASSERT_NE(before.source, after.source);
  const TemplateRenderDiff diff = DiffRenderedPrompts(before, after);
  EXPECT_EQ(diff.impact, Impact::kCosmetic);
  EXPECT_EQ(diff.changed_count(), 0);
  for (const ConversationDiff& c : diff.conversations) {
    EXPECT_TRUE(c.before.ok && c.after.ok) << c.conversation;
    EXPECT_EQ(c.unified_diff, "") << c.conversation;
  }
  EXPECT_THAT(FormatRenderDiff(diff),
              HasSubstr("impact: cosmetic (0 of 11 rendered prompts changed)"));
}

TEST(RenderDiff, SpecialTokenChangeAloneIsBehavioral) {
  TemplateRevision before = CorpusTemplate("meta-llama-Meta-Llama-3-8B-Instruct");
  TemplateRevision after = before;
  after.special_tokens =
      VariablesFromJson(Json{{"bos_token", "<|begin_of_text|>"}, {"eos_token", "<|eot_id|>"}});
  // The Llama 3 template never prints eos_token: same prompts.
  EXPECT_EQ(DiffRenderedPrompts(before, after).impact, Impact::kCosmetic);
  after.special_tokens = VariablesFromJson(Json{{"bos_token", "<s>"}});
  const TemplateRenderDiff diff = DiffRenderedPrompts(before, after);
  EXPECT_EQ(diff.impact, Impact::kBehavioral);
  // Every prompt starts with bos_token, so every conversation that renders changes; the one
  // with a null assistant content fails on both sides (trim of none) and stays unchanged.
  for (const ConversationDiff& c : diff.conversations) {
    EXPECT_EQ(c.changed, c.before.ok) << c.conversation;
  }
  EXPECT_FALSE(Find(diff, "tool_call_and_result").before.ok);
  EXPECT_EQ(diff.changed_count(), 10);
}

TEST(RenderDiff, TemplateThatStopsParsingFailsEveryConversation) {
  const TemplateRevision before{"{% for m in messages %}{{ m.role }}{% endfor %}", {}};
  const TemplateRevision after{"{% for m in messages %}\n{{ m.role }", {}};
  const TemplateRenderDiff diff = DiffRenderedPrompts(before, after);
  EXPECT_EQ(diff.impact, Impact::kBehavioral);
  for (const ConversationDiff& c : diff.conversations) {
    EXPECT_TRUE(c.changed);
    EXPECT_TRUE(c.before.ok);
    EXPECT_FALSE(c.after.ok);
    EXPECT_EQ(c.unified_diff, "");
  }
  EXPECT_THAT(FormatRenderDiff(diff),
              HasSubstr("multi_turn: changed: now fails to render\n  after: line 2"));
}

TEST(RenderDiff, ConversationFailingOnBothSidesIsUnchanged) {
  const TemplateRevision before{"{{ raise_exception('old') }}", {}};
  const TemplateRevision after{"{{ raise_exception('new') }}", {}};
  const TemplateRenderDiff diff = DiffRenderedPrompts(before, after);
  EXPECT_EQ(diff.impact, Impact::kCosmetic);
  EXPECT_THAT(FormatRenderDiff(diff), HasSubstr("render error before and after (unchanged)"));
  EXPECT_THAT(FormatRenderDiff(diff), HasSubstr("raise_exception: new"));
}

TEST(RenderDiff, UsesTheGivenConversations) {
  const std::vector<Conversation> conversations = {
      {"only", Json{{"messages", Json::array()}, {"x", 1}}}};
  const TemplateRenderDiff diff =
      DiffRenderedPrompts({"{{ x }}", {}}, {"{{ x + 1 }}", {}}, conversations);
  ASSERT_EQ(diff.conversations.size(), 1u);
  EXPECT_EQ(diff.conversations[0].before.text, "1");
  EXPECT_EQ(diff.conversations[0].after.text, "2");
  EXPECT_EQ(Changed(diff), std::set<std::string>{"only"});
}

TEST(UnifiedDiff, EqualTextsHaveNoDiff) {
  EXPECT_EQ(UnifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
}

TEST(UnifiedDiff, ChangedLineWithContext) {
  // Matches `diff -u` output.
  EXPECT_EQ(UnifiedDiff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", "a", "b"),
            "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, DistantChangesMakeSeparateHunks) {
  std::string before;
  std::string after;
  for (int i = 1; i <= 20; ++i) {
    before += std::to_string(i) + "\n";
    after += (i == 2 ? "two" : i == 19 ? "nineteen" : std::to_string(i)) + "\n";
  }
  EXPECT_EQ(UnifiedDiff(before, after, "a", "b"),
            "--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
            "@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n");
}

TEST(UnifiedDiff, InsertionsDeletionsAndMissingNewline) {
  EXPECT_EQ(UnifiedDiff("", "x", "a", "b"),
            "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n");
  EXPECT_EQ(UnifiedDiff("x\ny\n", "y\n", "a", "b"), "--- a\n+++ b\n@@ -1,2 +1 @@\n-x\n y\n");
  EXPECT_EQ(UnifiedDiff("a\nb", "a\nb\n", "a", "b"),
            "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
}

}  // namespace
}  // namespace hubwatch::chat_template
