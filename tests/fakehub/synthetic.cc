#include "tests/fakehub/synthetic.h"

#include <algorithm>
#include <cstdio>

#include "tests/fakehub/hashing.h"

namespace hubwatch::fakehub {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// owner of repo r, for every r: each owner's count from SyntheticOwnerSizes, dealt in an order
// shuffled by a fixed seed (Fisher-Yates over SplitMix64, the same on every platform).
std::vector<int> OwnerOfRepo(int repos, int owners) {
  std::vector<int> sizes = SyntheticOwnerSizes(repos, owners);
  std::vector<int> owner_of;
  owner_of.reserve(static_cast<size_t>(repos));
  for (int o = 0; o < owners; ++o)
    owner_of.insert(owner_of.end(), static_cast<size_t>(sizes[o]), o);
  uint64_t state = 0x6675686b6875622ull;
  for (size_t i = owner_of.size(); i > 1; --i) {
    std::swap(owner_of[i - 1], owner_of[SplitMix64(state) % i]);
  }
  return owner_of;
}

}  // namespace

std::vector<int> SyntheticOwnerSizes(int repos, int owners) {
  if (owners <= 0 || repos < owners) return {};
  std::vector<double> weight(static_cast<size_t>(owners));
  double total = 0;
  for (int i = 0; i < owners; ++i) total += weight[static_cast<size_t>(i)] = 1.0 / (i + 1);
  const int extra = repos - owners;
  std::vector<int> sizes(static_cast<size_t>(owners), 1);
  int dealt = 0;
  for (int i = 0; i < owners; ++i) {
    const int n = static_cast<int>(extra * weight[static_cast<size_t>(i)] / total);
    sizes[static_cast<size_t>(i)] += n;
    dealt += n;
  }
  for (int i = 0; dealt < extra; i = (i + 1) % owners, ++dealt) ++sizes[static_cast<size_t>(i)];
  return sizes;
}

std::vector<Repo> GenerateSyntheticRepos(const SyntheticOptions& options) {
  std::vector<Repo> repos;
  const int64_t start = ParseIsoTime(options.first_date).value_or(1735689600);
  const std::vector<int> owner_of =
      options.owners > 0 ? OwnerOfRepo(options.repos, options.owners) : std::vector<int>{};
  for (int r = 0; r < options.repos; ++r) {
    char name[64];
    std::snprintf(name, sizeof name, "%05d", r);
    Repo meta;
    meta.id = options.prefix + name;
    if (!owner_of.empty()) {
      char owner[32];
      std::snprintf(owner, sizeof owner, "owner-%04d", owner_of[static_cast<size_t>(r)]);
      meta.id = std::string(owner) + "/model-" + name;
    }
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

std::vector<Repo> GenerateSpamChildren(const SpamOptions& options) {
  std::vector<Repo> repos;
  const std::string name = options.upstream.substr(options.upstream.find('/') + 1);
  for (int i = 0; i < options.count; ++i) {
    const int serial = options.first_serial + i;
    char id[160];
    std::snprintf(id, sizeof id, "throwaway-%02d/%s-spam-%05d", serial % 97, name.c_str(), serial);
    Repo meta;
    meta.id = id;
    const std::string date = FormatIsoTime(options.time + i);
    meta.created_at = date;
    meta.library_name = options.relation == "adapter" ? "peft" : "transformers";
    meta.tags = {"base_model:" + options.upstream,
                 "base_model:" + options.relation + ":" + options.upstream, "region:us"};
    RepoBuilder builder(std::move(meta));
    RepoBuilder::CommitSpec spec;
    spec.title = "Upload";
    spec.authors = {"throwaway"};
    spec.date = date;
    for (const auto& [path, text] : options.files) spec.add[path] = MakeInlineBlob(text);
    (void)builder.AddCommit(std::move(spec));
    repos.push_back(std::move(builder).Build());
  }
  return repos;
}

}  // namespace hubwatch::fakehub
