#include "daemon/audit/config_references.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "daemon/audit/find_references.h"
#include "tests/audit/test_support.h"

namespace hubwatch::audit {
namespace {

using testing::Brief;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ConfigReferences, AxolotlStyleYamlWithSiblingRevision) {
  FileFindings f = FindReferences("train.yml",
                                  "base_model: meta-llama/Llama-3.1-8B  # the base\n"
                                  "base_model_revision: \"0123abc\"\n"
                                  "tokenizer_type: AutoTokenizer\n"
                                  "datasets:\n"
                                  "  - path: tatsu-lab/alpaca\n"
                                  "    type: alpaca\n"
                                  "dataset: tatsu-lab/alpaca\n"
                                  "output_dir: ./outputs/out\n"
                                  "hub_model_id: me/my-finetune\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("1:13 meta-llama/Llama-3.1-8B@0123abc (short-sha) yaml:base_model"));
}

TEST(ConfigReferences, YamlNestingListsAndValuesOnTheNextLine) {
  FileFindings f = FindReferences("c.yaml",
                                  "model_name_or_path:\n"
                                  "  Qwen/Qwen2.5-0.5B\n"
                                  "model_revision: main\n"
                                  "servers:\n"
                                  "  - model: 'org/a'\n"
                                  "    revision: v1\n"
                                  "  - model: org/b\n"
                                  "  - name: gpt\n"
                                  "    model: gpt-4\n"
                                  "nested:\n"
                                  "  inner:\n"
                                  "    tokenizer_name: org/tok\n"
                                  "  revision: not-for-inner\n"
                                  "script: |\n"
                                  "  model: org/inside-a-block-scalar\n"
                                  "---\n"
                                  "pretrained_model_name_or_path: \"org/doc2\"\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("2:3 Qwen/Qwen2.5-0.5B@main (name) yaml:model_name_or_path",
                          "5:12 org/a@v1 (name) yaml:model", "7:12 org/b (floating) yaml:model",
                          "12:21 org/tok (floating) yaml:tokenizer_name",
                          "17:32 org/doc2 (floating) yaml:pretrained_model_name_or_path"));
}

TEST(ConfigReferences, JsonObjectsIncludingMinifiedOnOneLine) {
  FileFindings f = FindReferences(
      "adapter_config.json",
      "{\"base_model_name_or_path\": \"org/base\", \"revision\": "
      "\"0123456789abcdef0123456789abcdef01234567\",\n"
      " \"nested\": {\"model\": \"org/n\", \"tokenizer\": {\"type\": \"x\"}},\n"
      " \"datasets\": [\"org/data\"], \"model_id\": \"llama-test\", \"model\": 3}\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("1:29 org/base@0123456789abcdef0123456789abcdef01234567 (full-sha) "
                          "json:base_model_name_or_path",
                          "2:22 org/n (floating) json:model"));
}

TEST(ConfigReferences, TomlTables) {
  FileFindings f = FindReferences("serve.toml",
                                  "[server]\n"
                                  "model = \"org/served\"  # comment\n"
                                  "revision = 'v2'\n"
                                  "[client]\n"
                                  "model_id = \"org/client\"\n");
  EXPECT_THAT(Brief(f.references), ElementsAre("2:9 org/served@v2 (name) toml:model",
                                               "5:12 org/client (floating) toml:model_id"));
}

TEST(ConfigReferences, HostileConfigsAreLinearAndSafe) {
  std::string deep(1 << 20, '[');
  EXPECT_THAT(FindReferences("d.json", deep).references, IsEmpty());
  std::string quotes(1 << 20, '"');
  EXPECT_THAT(FindReferences("q.json", quotes).references, IsEmpty());
  std::string one_line;
  while (one_line.size() < (1u << 20)) one_line += "{\"model\": \"org/m\"},";
  EXPECT_GT(FindReferences("l.json", "[" + one_line + "]").references.size(), 50000u);
  EXPECT_THAT(
      FindReferences("b.yaml", "model: org/\xff\xfe\nbase_model: \"unterminated\n").references,
      IsEmpty());
}

}  // namespace
}  // namespace hubwatch::audit
