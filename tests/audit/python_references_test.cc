#include "daemon/audit/python_references.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/audit/test_support.h"

namespace hubwatch::audit {
namespace {

using testing::Brief;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Lines;

constexpr char kSha[] = "0123456789abcdef0123456789abcdef01234567";

FileFindings Scan(const std::string& source) { return FindPythonReferences("m.py", source); }

TEST(PythonReferences, FromPretrainedOnAnyClassWithItsRevision) {
  FileFindings f =
      Scan(std::string("from transformers import AutoModelForCausalLM, AutoTokenizer\n"
                       "tok = AutoTokenizer.from_pretrained(\"gpt2\")\n"
                       "m = AutoModelForCausalLM.from_pretrained(\n"
                       "    'meta-llama/Llama-3.1-8B', revision=\"") +
           kSha +
           "\", torch_dtype='auto')\n"
           "p = DiffusionPipeline.from_pretrained(pretrained_model_name_or_path=\"sd/x\", "
           "revision=\"fp16\")\n"
           "proc = AutoProcessor.from_pretrained(\"org/vlm\", revision=\"abc1234\")\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("2:37 gpt2 (floating) python:from_pretrained",
                          std::string("4:5 meta-llama/Llama-3.1-8B@") + kSha +
                              " (full-sha) python:from_pretrained",
                          "5:69 sd/x@fp16 (name) python:from_pretrained",
                          "6:38 org/vlm@abc1234 (short-sha) python:from_pretrained"));
  EXPECT_THAT(f.unresolved, IsEmpty());
}

TEST(PythonReferences, ConstantsAndSimpleVariablesInTheSameFile) {
  FileFindings f = Scan(
      "MODEL_ID = \"org/name\"\n"
      "REV = 'v2.0'\n"
      "alias = MODEL_ID\n"
      "def main():\n"
      "    a = AutoModel.from_pretrained(MODEL_ID, revision=REV)\n"
      "    b = AutoModel.from_pretrained(alias)\n"
      "    c = AutoModel.from_pretrained(LATER)\n"
      "LATER = \"org/later\"\n");
  EXPECT_THAT(Brief(f.references), ElementsAre("5:35 org/name@v2.0 (name) python:from_pretrained",
                                               "6:35 org/name (floating) python:from_pretrained",
                                               "7:35 org/later (floating) python:from_pretrained"));
  EXPECT_THAT(f.unresolved, IsEmpty());  // and no model-constant duplicates
}

TEST(PythonReferences, WhatItCannotSeeIsUnresolvedWithAReason) {
  FileFindings f = Scan(
      "import os, sys\n"
      "org, name = 'a', 'b'\n"
      "A = AutoModel.from_pretrained(f\"{org}/{name}\")\n"
      "B = AutoModel.from_pretrained(os.environ[\"MODEL\"])\n"
      "picked = choose_model()\n"
      "C = AutoModel.from_pretrained(picked)\n"
      "def load(path):\n"
      "    return AutoModel.from_pretrained(path)\n"
      "D = AutoModel.from_pretrained(sys.argv[1])\n"
      "E = AutoModel.from_pretrained(\"org/x\", revision=get_rev())\n");
  EXPECT_THAT(Brief(f.references), ElementsAre("10:31 org/x (computed) python:from_pretrained"));
  EXPECT_THAT(Lines(f.unresolved), ElementsAre(3, 4, 6, 8, 9));
  EXPECT_THAT(f.unresolved[0].why, HasSubstr("f-string"));
  EXPECT_THAT(f.unresolved[1].why, HasSubstr("environment variable \"MODEL\""));
  EXPECT_THAT(f.unresolved[2].why, HasSubstr("function call"));
  EXPECT_THAT(f.unresolved[3].why, HasSubstr("parameter \"path\" of \"load\"()"));
  EXPECT_THAT(f.unresolved[4].why, HasSubstr("command line"));
}

TEST(PythonReferences, LiteralDefaultsAreRead) {
  FileFindings f = Scan(
      "import argparse, os\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model-id', type=str, default='org/from-argparse')\n"
      "p.add_argument('--revision', default=None)\n"
      "p.add_argument('--tokenizer')\n"
      "args = p.parse_args()\n"
      "m = AutoModel.from_pretrained(args.model_id, revision=args.revision)\n"
      "t = AutoTokenizer.from_pretrained(args.tokenizer)\n"
      "E = os.environ.get('MODEL', 'org/from-env')\n"
      "e = AutoModel.from_pretrained(E)\n"
      "DEFAULT = 'org/constant-default'\n"
      "p.add_argument('--base', default=DEFAULT)\n"
      "b = AutoModel.from_pretrained(args.base)\n"
      "def load(name=DEFAULT, rev='v1'):\n"
      "    return AutoModel.from_pretrained(name, revision=rev)\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("7:31 org/from-argparse (computed) python:from_pretrained",
                          "10:31 org/from-env (floating) python:from_pretrained",
                          "13:31 org/constant-default (floating) python:from_pretrained",
                          "15:38 org/constant-default@v1 (name) python:from_pretrained"));
  EXPECT_THAT(Lines(f.unresolved), ElementsAre(8));
  EXPECT_THAT(f.unresolved[0].why, HasSubstr("\"--tokenizer\", which has no default"));
}

// A bare name is a Hub id only where the class is a Hugging Face loader; other libraries'
// from_pretrained (TransformerLens) take their own aliases, so there only "org/name" counts.
TEST(PythonReferences, BareNamesOnlyOnHuggingFaceLoaderClasses) {
  FileFindings f = Scan(
      "a = HookedTransformer.from_pretrained(\"pythia-70m\")\n"
      "b = HookedTransformer.from_pretrained(\"EleutherAI/pythia-70m\")\n"
      "c = model_class.from_pretrained(\"gpt2\")\n"
      "d = GPT2LMHeadModel.from_pretrained(\"gpt2\")\n"
      "e = T5ForConditionalGeneration.from_pretrained(\"t5-small\")\n"
      "f = BertTokenizerFast.from_pretrained(\"bert-base-uncased\")\n"
      "g = CLIPTextModelWithProjection.from_pretrained(\"clip\")\n"
      "h = StableDiffusionPipeline.from_pretrained(\"sd\")\n"
      "i = DDPMScheduler.from_pretrained(\"ddpm\")\n"
      "j = AutoencoderKL.from_pretrained(\"vae\")\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("2:39 EleutherAI/pythia-70m (floating) python:from_pretrained",
                          "4:37 gpt2 (floating) python:from_pretrained",
                          "5:48 t5-small (floating) python:from_pretrained",
                          "6:39 bert-base-uncased (floating) python:from_pretrained",
                          "7:49 clip (floating) python:from_pretrained",
                          "8:45 sd (floating) python:from_pretrained",
                          "9:35 ddpm (floating) python:from_pretrained",
                          "10:35 vae (floating) python:from_pretrained"));
}

// A parameter without a default takes the literal that every call of its (plain) function in
// the file passes, by keyword or by position; calls that disagree, pass *args or pass nothing
// leave it unresolved.
TEST(PythonReferences, ParametersTakeTheLiteralEveryCallPasses) {
  FileFindings f = Scan(
      "def train(base_model, out, *, tok):\n"
      "    m = AutoModel.from_pretrained(base_model)\n"
      "    t = AutoTokenizer.from_pretrained(tok)\n"
      "def two(name):\n"
      "    return AutoModel.from_pretrained(name)\n"
      "def unused(model_id):\n"
      "    return AutoModel.from_pretrained(model_id)\n"
      "class C:\n"
      "    def load(self, repo):\n"
      "        return AutoModel.from_pretrained(repo)\n"
      "parser.add_argument(\"--base_model\", default=\"org/base\")\n"
      "args = parser.parse_args()\n"
      "train(base_model=args.base_model, out='x', tok=\"org/tok\")\n"
      "two(\"org/a\")\n"
      "two(\"org/b\")\n"
      "C().load(\"org/method\")\n");
  EXPECT_THAT(Brief(f.references), ElementsAre("2:35 org/base (floating) python:from_pretrained",
                                               "3:39 org/tok (floating) python:from_pretrained"));
  EXPECT_THAT(Lines(f.unresolved), ElementsAre(5, 7, 10));
}

TEST(PythonReferences, PipelinesDownloadsAndServingClients) {
  FileFindings f =
      Scan(std::string("from transformers import pipeline\n"
                       "a = pipeline('text-generation', model='org/gen', revision='main')\n"
                       "b = pipeline('fill-mask', 'bert-base-uncased')\n"
                       "c = hf_hub_download(repo_id='org/gguf', filename='m.gguf', revision='") +
           kSha +
           "')\n"
           "d = snapshot_download('org/snap')\n"
           "e = hf_hub_download('tatsu-lab/alpaca', 'x.json', repo_type='dataset')\n"
           "f = SentenceTransformer('all-MiniLM-L6-v2')\n"
           "g = CrossEncoder('cross-encoder/ms-marco-MiniLM-L6-v2')\n"
           "h = LLM(model='org/served', revision='v1', tokenizer='org/tok', "
           "tokenizer_revision='abcdef0')\n"
           "i = InferenceClient(model='org/tgi')\n"
           "j = load_dataset('tatsu-lab/alpaca')\n"
           "k = requests.get('https://huggingface.co/org/page')\n");
  EXPECT_THAT(
      Brief(f.references),
      ElementsAre(
          "2:39 org/gen@main (name) python:pipeline",
          "3:27 bert-base-uncased (floating) python:pipeline",
          std::string("4:29 org/gguf@") + kSha + " (full-sha) python:hf_hub_download",
          "5:23 org/snap (floating) python:snapshot_download",
          "7:25 all-MiniLM-L6-v2 (floating) python:sentence-transformers",
          "8:18 cross-encoder/ms-marco-MiniLM-L6-v2 (floating) python:sentence-transformers",
          "9:15 org/served@v1 (name) python:vllm", "9:54 org/tok@abcdef0 (short-sha) python:vllm",
          "10:27 org/tgi (floating) python:inference-client"));
}

TEST(PythonReferences, PeftAdaptersAreTheSecondArgument) {
  FileFindings f = Scan(
      "base = AutoModelForCausalLM.from_pretrained('org/base')\n"
      "m = PeftModel.from_pretrained(base, 'org/adapter', revision='v3')\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("1:45 org/base (floating) python:from_pretrained",
                          "2:37 org/adapter@v3 (name) python:from_pretrained"));
}

TEST(PythonReferences, LocalPathsCommentsAndDocstringsAreNotFindings) {
  FileFindings f = Scan(
      "\"\"\"Usage: from_pretrained('org/in-docstring')\n"
      "  --model_name_or_path Qwen/Qwen2.5 \"\"\"\n"
      "# m = AutoModel.from_pretrained('org/commented')\n"
      "a = AutoModel.from_pretrained('./out')\n"
      "b = AutoModel.from_pretrained('/models/x')\n"
      "c = AutoModel.from_pretrained('../ckpt')\n"
      "d = AutoModel.from_pretrained(r'C:\\models')\n"
      "class M(PreTrainedModel):\n"
      "    def from_pretrained(cls, path):\n"
      "        return super().from_pretrained(path)\n"
      "    def load(cls, path):\n"
      "        return cls.from_pretrained(path)\n"
      "x = AutoModel.from_pretrained('org/na\xff\xfeme')\n");
  EXPECT_THAT(f.references, IsEmpty());
  EXPECT_THAT(f.unresolved, IsEmpty());
}

TEST(PythonReferences, ModelNamedVariablesNoCallReads) {
  FileFindings f = Scan(
      "models = [\n"
      "    ('meta-llama/Llama-3.1-8B-Instruct', 1),\n"
      "    ('org/other', 4),\n"
      "]\n"
      "model_dir = 'results/run'\n"
      "dataset_name = 'tatsu-lab/alpaca'\n"
      "for m in models:\n"
      "    run(m[0])\n");
  EXPECT_THAT(Brief(f.references),
              ElementsAre("2:6 meta-llama/Llama-3.1-8B-Instruct (floating) python:model-constant",
                          "3:6 org/other (floating) python:model-constant"));
}

TEST(PythonReferences, HostileSourceIsLinearAndSafe) {
  // A 1 MiB single line of calls, an unterminated string, deep brackets, invalid UTF-8.
  std::string line;
  while (line.size() < (1u << 20)) line += "AutoModel.from_pretrained('org/m'),";
  std::string hostile = line + "\n" + std::string(200000, '(') + "\n'unterminated\n\"\"\"open\n" +
                        std::string("\xff\xfe\x80 = 'x'\n");
  auto start = std::chrono::steady_clock::now();
  FileFindings f = Scan(hostile);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GT(f.references.size(), 25000u);
  EXPECT_EQ(f.references.front().repo_id, "org/m");
  EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count(), 20);
  EXPECT_THAT(Scan(std::string(100000, '"')).references, IsEmpty());
  EXPECT_THAT(Scan("AutoModel.from_pretrained(").references, IsEmpty());
  EXPECT_THAT(Scan("x = AutoModel.from_pretrained('org/a', revision='\x1b[31mred')\n").references,
              IsEmpty());
}

TEST(PythonReferences, InvalidRevisionIsUnresolvedAndEscaped) {
  FileFindings f = Scan("x = AutoModel.from_pretrained('org/a', revision='main\\x1b; rm -rf')\n");
  ASSERT_EQ(f.unresolved.size(), 1u);
  EXPECT_THAT(f.unresolved[0].why, HasSubstr("not a git revision"));
  for (char c : f.unresolved[0].why) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << f.unresolved[0].why;
}

}  // namespace
}  // namespace hubwatch::audit
