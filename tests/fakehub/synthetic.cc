#include "tests/fakehub/synthetic.h"

#include <cstdio>

#include "tests/fakehub/hashing.h"

namespace hubwatch::fakehub {

std::vector<Repo> GenerateSyntheticRepos(const SyntheticOptions& options) {
  std::vector<Repo> repos;
  const int64_t start = ParseIsoTime(options.first_date).value_or(1735689600);
  for (int r = 0; r < options.repos; ++r) {
    char name[64];
    std::snprintf(name, sizeof name, "%05d", r);
    Repo meta;
    meta.id = options.prefix + name;
    meta.pipeline_tag = "text-generation";
    meta.library_name = "transformers";
    meta.tags = {"transformers", "safetensors", "llama", "synthetic"};
    RepoBuilder builder(std::move(meta));
    for (int c = 0; c < options.commits; ++c) {
      RepoBuilder::CommitSpec spec;
      spec.title = c == 0 ? "initial commit" : "Update config.json (" + std::to_string(c) + ")";
      spec.authors = {c == 0 ? "system" : "synthetic-bot"};
      spec.date = FormatIsoTime(start + r * 60 + c * 3600);
      std::string config =
          "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
          "\"hidden_size\": 256, \"num_hidden_layers\": " +
          std::to_string(2 + c) + ", \"vocab_size\": 1024}\n";
      if (c == 0) {
        spec.add["config.json"] = MakeInlineBlob(config);
        spec.add["tokenizer_config.json"] =
            MakeInlineBlob("{\"bos_token\": \"<s>\", \"eos_token\": \"</s>\"}\n");
        for (int f = 0; f < options.extra_files; ++f) {
          char file[64];
          std::snprintf(file, sizeof file, "extra/file-%05d.txt", f);
          spec.add[file] = MakeInlineBlob("synthetic file " + std::to_string(f) + "\n");
        }
        if (options.tensors_per_file > 0) {
          SafetensorsManifest manifest;
          manifest.metadata = {{"format", "pt"}};
          manifest.seed = static_cast<uint64_t>(r) + 1;
          manifest.sha256 = Sha256Hex(spec.title + std::to_string(r));
          for (int t = 0; t < options.tensors_per_file; ++t) {
            manifest.tensors.push_back(
                {"model.layers." + std::to_string(t) + ".mlp.weight", "", {256, 256}});
          }
          spec.add["model.safetensors"] = MakeSafetensorsBlob(manifest).value();
        }
      } else {
        spec.change["config.json"] = MakeInlineBlob(config);
      }
      (void)builder.AddCommit(std::move(spec));
    }
    repos.push_back(std::move(builder).Build());
  }
  return repos;
}

}  // namespace hubwatch::fakehub
