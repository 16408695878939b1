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

// Kubernetes-style environment lists: the item whose `name:` is a model variable (MODEL_ID,
// HF_MODEL_ID, MODEL_NAME, MODEL, ...) names its model in the sibling `value:`, pinned by a
// REVISION item of the same list.
TEST(ConfigReferences, KubernetesEnvironmentLists) {
  FileFindings f = FindReferences("deployment.yaml",
                                  "spec:\n"
                                  "  containers:\n"
                                  "    - name: tgi\n"
                                  "      env:\n"
                                  "        - name: MODEL_ID\n"
                                  "          value: meta-llama/Meta-Llama-3-8B-Instruct\n"
                                  "        - name: REVISION\n"
                                  "          value: \"abc1234\"\n"
                                  "        - name: PORT\n"
                                  "          value: \"8080\"\n"
                                  "    - name: other\n"
                                  "      env:\n"
                                  "        - value: org/value-first\n"
                                  "          name: HF_MODEL_NAME\n"
                                  "        - name: OUTPUT_MODEL\n"
                                  "          value: org/not-a-model-variable\n"
                                  "        - name: MODEL\n"
                                  "          value: ./local\n");
  EXPECT_THAT(
      Brief(f.references),
      ElementsAre("6:18 meta-llama/Meta-Llama-3-8B-Instruct@abc1234 (short-sha) yaml:env:MODEL_ID",
                  "13:18 org/value-first (floating) yaml:env:HF_MODEL_NAME"));
  FileFindings json =
      FindReferences("pod.json", "{\"env\": [{\"name\": \"MODEL_ID\", \"value\": \"org/j\"}]}\n");
  EXPECT_THAT(Brief(json.references), ElementsAre("1:40 org/j (floating) json:env:MODEL_ID"));
}

// Command lines written as YAML lists read with the shell reader's flag vocabulary.
TEST(ConfigReferences, YamlArgumentLists) {
  FileFindings f = FindReferences("job.yaml",
                                  "containers:\n"
                                  "  - name: trl\n"
                                  "    command: [\"/bin/bash\", \"-c\", 'exec trl sft \"$@\"']\n"
                                  "    args:\n"
                                  "      # MODEL\n"
                                  "      - \"--model_name_or_path=mistralai/Mistral-7B-v0.3\"\n"
                                  "      - --dataset_name=org/data\n"
                                  "      - --revision\n"
                                  "      - v0.3\n"
                                  "  - name: tgi\n"
                                  "    args: [\"--model-id\", \"org/flow\",\n"
                                  "           \"--tokenizer\", org/tok, --port, 80]\n"
                                  "  - args:\n"
                                  "    - --model\n"
                                  "    - org/item-dash-at-key-indent\n"
                                  "    - --reward.model_name_or_path\n"
                                  "    - org/namespaced\n"
                                  "run: |\n"
                                  "  - --model\n"
                                  "  - org/in-a-block-scalar\n"
                                  "nested: [[\"--model\", \"org/nested\"]]\n"
                                  "last: [\"--model\"]\n");
  EXPECT_THAT(
      Brief(f.references),
      ElementsAre("6:9 mistralai/Mistral-7B-v0.3@v0.3 (name) yaml:args",
                  "11:26 org/flow (floating) yaml:args", "12:27 org/tok (floating) yaml:args",
                  "15:7 org/item-dash-at-key-indent (floating) yaml:args",
                  "17:7 org/namespaced (floating) yaml:args"));
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
  std::string args = "args: [";
  while (args.size() < (1u << 20)) args += "\"--model\", \"org/m\", ";
  EXPECT_GT(FindReferences("a.yaml", args + "]\n").references.size(), 50000u);
  EXPECT_THAT(FindReferences("o.yaml", std::string(1 << 20, '[')).references, IsEmpty());
  EXPECT_THAT(FindReferences("e.yaml", "args: [\"--model\", \"org/\xff\"]\n- --model\n").references,
              IsEmpty());
}

}  // namespace
}  // namespace hubwatch::audit
