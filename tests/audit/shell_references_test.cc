#include "daemon/audit/shell_references.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "daemon/audit/find_references.h"
#include "tests/audit/test_support.h"

namespace hubwatch::audit {
namespace {

using testing::Brief;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Lines;

TEST(ShellReferences, DownloadAndServeCommands) {
  FileFindings f = FindReferences(
      "run.sh",
      "#!/bin/bash\n"
      "huggingface-cli download meta-llama/Llama-3.1-8B --revision abc1234 --local-dir /m\n"
      "hf download --local-dir x Qwen/Qwen2.5-7B config.json\n"
      "hf download tatsu-lab/alpaca --repo-type dataset\n"
      "vllm serve mistralai/Mistral-7B-v0.1 --revision v0.1 --tokenizer org/tok\n"
      "text-generation-launcher --model-id tiiuae/falcon-7b --revision main\n"
      "python -m vllm.entrypoints.openai.api_server --model=gpt2 --port 8000\n"
      "# vllm serve org/commented-out\n");
  EXPECT_THAT(
      Brief(f.references),
      ElementsAre("2:26 meta-llama/Llama-3.1-8B@abc1234 (short-sha) shell:huggingface-cli-download",
                  "3:27 Qwen/Qwen2.5-7B (floating) shell:hf-download",
                  "5:12 mistralai/Mistral-7B-v0.1@v0.1 (name) shell:vllm-serve",
                  "5:66 org/tok (floating) shell:vllm-serve",
                  "6:37 tiiuae/falcon-7b@main (name) shell:text-generation-launcher",
                  "7:46 gpt2 (floating) shell:vllm-api-server"));
}

TEST(ShellReferences, ContinuationsVariablesAndGenericFlags) {
  FileFindings f = FindReferences("train.sh",
                                  "MODEL=${HF_MODEL:-org/default}\n"
                                  "export REV=\"v2\"\n"
                                  "CUDA_VISIBLE_DEVICES=0 accelerate launch train.py \\\n"
                                  "    --model_name_or_path $MODEL \\\n"
                                  "    --model_revision ${REV} \\\n"
                                  "    --output_dir out/run\n"
                                  "vllm serve \"$UNSET\" &\n"
                                  "python eval.py --model gpt-4 --model_id ./local\n"
                                  "echo \"vllm serve org/in-a-string\"\n");
  EXPECT_THAT(Brief(f.references), ElementsAre("4:26 org/default@v2 (name) shell:model-flag"));
  EXPECT_THAT(Lines(f.unresolved), ElementsAre(7));
  EXPECT_THAT(f.unresolved[0].why, HasSubstr("\"UNSET\", set outside this file"));
}

// Found on held-out real files (tests/fixtures/audit/heldout): OpenRLHF's namespaced flags,
// every occurrence of a flag in one command, lm-evaluation-harness's --model_args, and TEI's
// router (whose image builds are named text-embeddings-router-75, -80, ...).
TEST(ShellReferences, NamespacedFlagsModelArgsAndTeiRouter) {
  FileFindings f = FindReferences(
      "eval.sh",
      "python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path org/actor \\\n"
      "   --reward.model_name_or_path=org/reward --data.prompt_dataset org/prompts --ckpt.path "
      "a.b\n"
      "lm_eval --model hf --model_args pretrained=\"google/gemma-7b\",revision=v1 --tasks x\n"
      "lm_eval --model vllm --model_args pretrained=$MODEL,dtype=bfloat16\n"
      "lm_eval --model hf --model_args parallelize=true\n"
      "exec text-embeddings-router-80 \"$@\"\n"
      "text-embeddings-router --model-id BAAI/bge-small-en-v1.5 --revision main\n"
      "python x.py --a.b.model org/deep\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("1:66 org/actor (floating) shell:model-flag",
                          "2:4 org/reward (floating) shell:model-flag",
                          "3:33 google/gemma-7b@v1 (name) shell:lm-eval-model-args",
                          "7:35 BAAI/bge-small-en-v1.5@main (name) shell:text-embeddings-router",
                          "8:25 org/deep (floating) shell:model-flag"));
  EXPECT_THAT(Lines(f.unresolved), ElementsAre(4, 6));
}

TEST(ShellReferences, DockerfileAndMakefile) {
  FileFindings docker =
      FindReferences("deploy/Dockerfile",
                     "FROM vllm/vllm-openai:v0.8.4\n"
                     "ARG MODEL=org/served\n"
                     "ENV REVISION v3\n"
                     "RUN huggingface-cli download ${MODEL} --revision ${REVISION}\n"
                     "CMD [\"vllm\", \"serve\", \"org/exec-form\"]\n");
  EXPECT_THAT(Brief(docker.references),
              ElementsAre("4:30 org/served@v3 (name) shell:huggingface-cli-download",
                          "5:23 org/exec-form (floating) shell:vllm-serve"));
  FileFindings make = FindReferences("Makefile",
                                     "MODEL := org/from-make\n"
                                     "serve:\n"
                                     "\t@text-generation-launcher --model-id $(MODEL) --port 8080\n"
                                     "launch:\n"
                                     "\ttext-generation-launcher --port 8080\n");
  EXPECT_THAT(Brief(make.references),
              ElementsAre("3:39 org/from-make (floating) shell:text-generation-launcher"));
  EXPECT_THAT(Lines(make.unresolved), ElementsAre(5));  // reads MODEL_ID from the environment
}

// A variable assigned inside a branch (if/elif/else, case arms, loops, functions, make's ifeq)
// holds that value only inside it: after the branch it is unresolved, whatever the branch set
// (a local path included), unless every path leaves it with the same value.
TEST(ShellReferences, VariablesAssignedInConditionalBranchesAreUnresolved) {
  FileFindings f =
      FindReferences("entrypoint.sh",
                     "if [[ $URI == gs://* ]]; then\n"
                     "  TARGET=\"/tmp/model\"\n"
                     "  export MODEL_ID=\"$TARGET\"\n"
                     "  vllm serve $MODEL_ID\n"  // inside the branch: the local path, skipped
                     "fi\n"
                     "exec text-embeddings-router-80 \"$@\"\n"  // MODEL_ID: set in a branch only
                     "MODEL=org/top\n"
                     "if [ -n \"$BIG\" ]; then MODEL=org/big; else MODEL=org/small; fi\n"
                     "vllm serve $MODEL\n"
                     "REV=v1\n"
                     "case $X in\n"
                     "  a) REV=v1 ;;\n"
                     "esac\n"
                     "for m in a b; do\n"
                     "  TOK=org/tok\n"
                     "done\n"
                     "vllm serve org/pinned --revision $REV --tokenizer $TOK\n"
                     "serve() {\n"
                     "  NAME=org/in-function\n"
                     "}\n"
                     "hf download $NAME\n"
                     "SEQ=org/first\n"
                     "SEQ=org/second\n"
                     "hf download $SEQ\n");
  EXPECT_THAT(Brief(f.references), ElementsAre("17:12 org/pinned@v1 (name) shell:vllm-serve",
                                               "24:13 org/second (floating) shell:hf-download"));
  EXPECT_THAT(Lines(f.unresolved), ElementsAre(6, 9, 17, 21));
  ASSERT_EQ(f.unresolved.size(), 4u);
  EXPECT_THAT(f.unresolved[0].why, HasSubstr("\"MODEL_ID\", assigned in a conditional branch"));
  EXPECT_THAT(f.unresolved[1].why, HasSubstr("\"MODEL\", assigned in a conditional branch"));
}

TEST(ShellReferences, HostileScriptsAreLinearAndSafe) {
  std::string line;
  while (line.size() < (1u << 20)) line += "hf download org/m; ";
  EXPECT_GT(FindReferences("x.sh", line).references.size(), 50000u);
  EXPECT_THAT(FindReferences("q.sh", std::string(1 << 20, '\'')).references, IsEmpty());
  EXPECT_THAT(FindReferences("c.sh", std::string(1 << 20, '\\')).references, IsEmpty());
  EXPECT_THAT(FindReferences("u.sh", "vllm serve org/\xff\xfe\n").references, IsEmpty());
  std::string nested;
  while (nested.size() < (1u << 20)) nested += "if x; then M=org/a; ";
  EXPECT_EQ(FindReferences("n.sh", nested + "\nvllm serve $M\n").references.size(), 1u);  // inside
  EXPECT_THAT(FindReferences("f.sh", std::string(1 << 20, 'f') + "\nfi\ndone\n}\n").references,
              IsEmpty());
}

}  // namespace
}  // namespace hubwatch::audit
