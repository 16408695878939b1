// The chat-template engine, on the shapes of the real incidents.

#include "tracker/diff/chat_template_diff.h"

#include <gtest/gtest.h>

namespace hubwatch::diff {
namespace {

using nlohmann::json;

ChatTemplateFiles InConfig(const json& chat_template) {
  json config = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  if (!chat_template.is_null()) config["chat_template"] = chat_template;
  return {.tokenizer_config = config.dump(2)};
}

const std::string kLlama3Template =
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ "
    "message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"
    "{% endif %}";

// F2: Meta-Llama-3-8B (base) "Remove chat template (#32)".
TEST(ChatTemplateDiff, BaseModelTemplateRemoved) {
  const std::vector<Change> changes =
      DiffChatTemplates(InConfig(kLlama3Template), InConfig(nullptr));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kChatTemplate);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].path, "tokenizer_config.json");
  EXPECT_EQ(changes[0].summary, "chat template removed (was in tokenizer_config.json)");
  EXPECT_EQ(changes[0].details["status"], "removed");
  EXPECT_EQ(changes[0].details["lines_removed"], 5);
  EXPECT_TRUE(changes[0].details["to"].is_null());
}

// F4: Mistral-7B-Instruct-v0.3, five template revisions in six weeks: five changes.
TEST(ChatTemplateDiff, MistralFiveTemplateCommits) {
  const std::vector<std::string> revisions = {
      "{{ bos_token }}{% for message in messages %}[INST] {{ message['content'] }} [/INST]"
      "{% endfor %}",
      "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}[INST] "
      "{{ message['content'] }}[/INST]{% endif %}{% endfor %}",
      "{{- bos_token }}\n{%- for message in messages %}\n{%- if message['role'] == 'user' %}\n"
      "{{- '[INST] ' + message['content'] + '[/INST]' }}\n{%- endif %}\n{%- endfor %}\n",
      "{{- bos_token }}\n{%- for message in messages %}\n{%- if message['role'] == 'user' %}\n"
      "{{- '[INST] ' + message['content'] + '[/INST]' }}\n{%- elif message['role'] == "
      "'assistant' %}\n{{- ' ' + message['content'] + eos_token }}\n{%- endif %}\n{%- endfor %}\n",
      "{{- bos_token }}\n{%- if tools is not none %}[AVAILABLE_TOOLS]{{ tools | tojson }}"
      "[/AVAILABLE_TOOLS]{%- endif %}\n{%- for message in messages %}\n{%- if message['role'] == "
      "'user' %}\n{{- '[INST] ' + message['content'] + '[/INST]' }}\n{%- elif message['role'] == "
      "'assistant' %}\n{{- ' ' + message['content'] + eos_token }}\n{%- endif %}\n{%- endfor %}\n",
      "{{- bos_token }}\n{%- if tools is not none and tools | length > 0 %}[AVAILABLE_TOOLS]"
      "{{ tools | tojson }}[/AVAILABLE_TOOLS]{%- endif %}\n{%- for message in messages %}\n"
      "{%- if message['role'] == 'user' %}\n{{- '[INST] ' + message['content'] + '[/INST]' }}\n"
      "{%- elif message['role'] == 'assistant' and message.tool_calls is defined and "
      "message.tool_calls is not none %}\n{{- '[TOOL_CALLS]' }}\n{%- elif message['role'] == "
      "'assistant' %}\n{{- ' ' + message['content'] + eos_token }}\n{%- endif %}\n{%- endfor %}\n",
  };
  int changed = 0;
  for (size_t i = 1; i < revisions.size(); ++i) {
    const std::vector<Change> changes =
        DiffChatTemplates(InConfig(revisions[i - 1]), InConfig(revisions[i]));
    ASSERT_EQ(changes.size(), 1u) << i;
    EXPECT_EQ(changes[0].details["status"], "changed");
    EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
    EXPECT_TRUE(changes[0].summary.starts_with("chat template changed (+")) << changes[0].summary;
    EXPECT_TRUE(changes[0].details["unified_diff"].get<std::string>().starts_with(
        "--- a/tokenizer_config.json\n+++ b/tokenizer_config.json\n@@ -"));
    ++changed;
  }
  EXPECT_EQ(changed, 5);
}

// F7: DeepSeek-R1 distills: the generation prompt now ends with <think>.
TEST(ChatTemplateDiff, DeepSeekThinkIsShownInTheSummary) {
  const std::string before =
      "{% for message in messages %}{{ message['content'] }}{% endfor %}\n"
      "{% if add_generation_prompt %}{{'<｜Assistant｜>'}}{% endif %}";
  const std::string after =
      "{% for message in messages %}{{ message['content'] }}{% endfor %}\n"
      "{% if add_generation_prompt %}{{'<｜Assistant｜><think>\\n'}}{% endif %}";
  const std::vector<Change> changes = DiffChatTemplates(InConfig(before), InConfig(after));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].summary,
            "chat template changed (+1 -1 lines): + {% if add_generation_prompt "
            "%}{{'<｜Assistant｜><think>\\n'}}{% endif %}");
  EXPECT_EQ(changes[0].details["unified_diff"],
            "--- a/tokenizer_config.json\n+++ b/tokenizer_config.json\n@@ -1,2 +1,2 @@\n"
            " {% for message in messages %}{{ message['content'] }}{% endfor %}\n"
            "-{% if add_generation_prompt %}{{'<｜Assistant｜>'}}{% endif %}\n"
            "\\ No newline at end of file\n"
            "+{% if add_generation_prompt %}{{'<｜Assistant｜><think>\\n'}}{% endif %}\n"
            "\\ No newline at end of file\n");
}

TEST(ChatTemplateDiff, MoveToJinjaWithIdenticalTextIsCosmetic) {
  ChatTemplateFiles after = InConfig(nullptr);
  after.chat_template_jinja = kLlama3Template;
  std::vector<Change> changes = DiffChatTemplates(InConfig(kLlama3Template), after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kCosmetic);
  EXPECT_EQ(changes[0].path, "chat_template.jinja");
  EXPECT_EQ(changes[0].summary,
            "chat template moved from tokenizer_config.json to chat_template.jinja (text "
            "identical)");
  EXPECT_EQ(changes[0].details["status"], "moved");
  // The .jinja wins even while the config keeps a stale copy.
  ChatTemplateFiles stale = InConfig("{{ stale }}");
  stale.chat_template_jinja = kLlama3Template;
  changes = DiffChatTemplates(InConfig(kLlama3Template), stale);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].details["status"], "moved");
  // Moved and edited.
  ChatTemplateFiles edited = InConfig(nullptr);
  edited.chat_template_jinja = kLlama3Template + "\n";
  changes = DiffChatTemplates(InConfig(kLlama3Template), edited);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_TRUE(changes[0].summary.starts_with(
      "chat template moved from tokenizer_config.json to chat_template.jinja and changed"));
}

TEST(ChatTemplateDiff, NamedTemplatesAreDiffedByName) {
  const json before = json::array({{{"name", "default"}, {"template", "{{ a }}"}},
                                   {{"name", "tool_use"}, {"template", "{{ t }}"}}});
  const json after = json::array({{{"name", "default"}, {"template", "{{ a }}"}},
                                  {{"name", "tool_use"}, {"template", "{{ t2 }}"}},
                                  {{"name", "rag"}, {"template", "{{ r }}\n{{ docs }}"}}});
  const std::vector<Change> changes = DiffChatTemplates(InConfig(before), InConfig(after));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].summary, "chat template \"rag\" added (2 lines, in tokenizer_config.json)");
  EXPECT_EQ(changes[1].summary, "chat template \"tool_use\" changed (+1 -1 lines): + {{ t2 }}");
  EXPECT_EQ(changes[1].details["name"], "tool_use");
  // A list becoming a plain string: "default" stays (same text), tool_use is removed.
  const std::vector<Change> collapsed = DiffChatTemplates(InConfig(before), InConfig("{{ a }}"));
  ASSERT_EQ(collapsed.size(), 1u);
  EXPECT_EQ(collapsed[0].summary,
            "chat template \"tool_use\" removed (was in tokenizer_config.json)");
}

TEST(ChatTemplateDiff, ChatTemplateJson) {
  ChatTemplateFiles before;
  before.chat_template_json = R"({"chat_template": "{{ a }}"})";
  ChatTemplateFiles after;
  after.chat_template_json = R"({"chat_template": "{{ b }}"})";
  std::vector<Change> changes = DiffChatTemplates(before, after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path, "chat_template.json");
  EXPECT_EQ(changes[0].details["status"], "changed");
  after.chat_template_json = R"({"chat_template": )";
  changes = DiffChatTemplates(before, after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kError);
  EXPECT_EQ(changes[0].path, "chat_template.json");
}

TEST(ChatTemplateDiff, MalformedSources) {
  // A chat_template of the wrong shape is this engine's error to report, once.
  std::vector<Change> changes = DiffChatTemplates(InConfig("{{ a }}"), InConfig(42));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kError);
  EXPECT_EQ(changes[0].summary,
            "tokenizer_config.json: chat_template is neither a string nor a list of templates");
  EXPECT_TRUE(DiffChatTemplates(InConfig(42), InConfig(42)).empty());
  // Invalid JSON is the tokenizer engine's to report; no template change is claimed.
  EXPECT_TRUE(DiffChatTemplates(InConfig("{{ a }}"), {.tokenizer_config = "{oops"}).empty());
  EXPECT_TRUE(DiffChatTemplates({.tokenizer_config = "{oops"}, InConfig("{{ a }}")).empty());
}

TEST(ChatTemplateDiff, NoTemplatesAnywhereIsNoChange) {
  EXPECT_TRUE(DiffChatTemplates({}, {}).empty());
  EXPECT_TRUE(DiffChatTemplates(InConfig(nullptr), {}).empty());
}

TEST(ChatTemplateDiff, RenderedComparisonHook) {
  int calls = 0;
  ChatTemplateDiffOptions options;
  options.compare_rendered = [&](const TemplateRevisions& r) -> std::optional<RenderedComparison> {
    ++calls;
    EXPECT_EQ(r.name, "default");
    EXPECT_EQ(r.before.text, "{{ a }}");
    EXPECT_EQ(r.after.text, "{{ a }} ");
    EXPECT_TRUE(r.after_files.tokenizer_config->find("</s>") != std::string::npos);
    return RenderedComparison{Impact::kCosmetic, "0 of 10 prompts changed", {{"changed", 0}}};
  };
  std::vector<Change> changes =
      DiffChatTemplates(InConfig("{{ a }}"), InConfig("{{ a }} "), options);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(changes[0].impact, Impact::kCosmetic);
  EXPECT_EQ(changes[0].details["rendered"], json({{"changed", 0}}));
  EXPECT_TRUE(changes[0].summary.ends_with("; rendered: 0 of 10 prompts changed"));
  // Not called for added, removed or moved templates; nullopt leaves the change as it was.
  changes = DiffChatTemplates(InConfig(nullptr), InConfig("{{ a }}"), options);
  EXPECT_EQ(calls, 1);
  options.compare_rendered = [](const TemplateRevisions&) { return std::nullopt; };
  changes = DiffChatTemplates(InConfig("{{ a }}"), InConfig("{{ b }}"), options);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_TRUE(changes[0].details["rendered"].is_null());
}

}  // namespace
}  // namespace hubwatch::diff
