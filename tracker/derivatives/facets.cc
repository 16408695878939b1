#include "tracker/derivatives/facets.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "estimator/base/json_nesting.h"
#include "estimator/base/text.h"

namespace hubwatch::derivatives {
namespace {

using nlohmann::json;

constexpr std::string_view kTokenizerConfig = "tokenizer_config.json";
constexpr std::string_view kTemplateFile = "chat_template.jinja";
constexpr std::string_view kTemplateFacet = "chat_template";

// Keys that say nothing about outputs (tracker/diff/config_diff.cc's cosmetic fields, and the
// tokenizer's own bookkeeping).
constexpr std::array<std::string_view, 7> kCosmeticKeys = {
    "transformers_version", "_name_or_path",  "_commit_hash", "_from_model_config", "use_cache",
    "name_or_path",         "tokenizer_file",
};

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return HexLower({reinterpret_cast<const char*>(digest), length});
}

std::string HashJson(const json& value) {
  return Sha256Hex(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

bool IsSpecialTokenKey(std::string_view key) {
  return key.ends_with("_token") || key == "additional_special_tokens";
}

// {"content": "<|eot_id|>", "lstrip": false, ...} -> "<|eot_id|>", in lists too.
json Canonical(std::string_view key, const json& value) {
  if (!IsSpecialTokenKey(key)) return value;
  auto reduce = [](const json& v) {
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"];
    return v;
  };
  if (!value.is_array()) return reduce(value);
  json out = json::array();
  for (const json& item : value) out.push_back(reduce(item));
  return out;
}

std::string FileOf(const std::string& facet) {
  const size_t hash = facet.find('#');
  return hash == std::string::npos ? "" : facet.substr(0, hash);
}

bool IsTemplateFacet(const std::string& facet) {
  return facet == kTemplateFacet || facet.starts_with("chat_template:");
}

void AddTemplates(const json& chat_template, FacetSet& facets) {
  if (chat_template.is_string()) {
    facets.values.try_emplace(std::string(kTemplateFacet),
                              Sha256Hex(chat_template.get_ref<const std::string&>()));
    return;
  }
  if (!chat_template.is_array()) return;
  for (const json& entry : chat_template) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
        !entry.contains("template") || !entry["template"].is_string()) {
      continue;
    }
    const std::string& name = entry["name"].get_ref<const std::string&>();
    const std::string key =
        name == "default" ? std::string(kTemplateFacet) : std::string(kTemplateFacet) + ":" + name;
    facets.values.try_emplace(key, Sha256Hex(entry["template"].get_ref<const std::string&>()));
  }
}

}  // namespace

Coverage FacetSet::Cover(const std::string& facet) const {
  if (values.count(facet)) return Coverage::kPresent;
  if (from_gguf) return Coverage::kNotShipped;  // a header without the key cannot say
  if (IsTemplateFacet(facet)) {
    return files.count(std::string(kTokenizerConfig)) || files.count(std::string(kTemplateFile))
               ? Coverage::kAbsent
               : Coverage::kNotShipped;
  }
  return files.count(FileOf(facet)) ? Coverage::kAbsent : Coverage::kNotShipped;
}

const std::string* FacetSet::Value(const std::string& facet) const {
  auto it = values.find(facet);
  return it == values.end() ? nullptr : &it->second;
}

const std::vector<std::string>& FacetFiles() {
  static const std::vector<std::string> kFiles = {
      "tokenizer_config.json", "special_tokens_map.json", "generation_config.json",
      "config.json",           "tokenizer.json",          std::string(kTemplateFile),
  };
  return kFiles;
}

FacetSet FacetsOfFiles(const std::map<std::string, std::string>& files) {
  FacetSet facets;
  for (const std::string& path : FacetFiles()) {
    auto it = files.find(path);
    if (it == files.end()) continue;
    facets.files.insert(path);
    if (path == kTemplateFile) {
      // The jinja file wins over tokenizer_config.json's template (transformers >= 4.43).
      facets.values[std::string(kTemplateFacet)] = Sha256Hex(it->second);
      continue;
    }
    if (JsonNestsDeeperThan(it->second)) {
      facets.errors[path] = "nested deeper than " + std::to_string(kMaxJsonNesting) + " levels";
      continue;
    }
    json doc = json::parse(it->second, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) {
      facets.errors[path] = doc.is_discarded() ? "not valid JSON" : "not a JSON object";
      continue;
    }
    for (const auto& [key, value] : doc.items()) {
      if (std::find(kCosmeticKeys.begin(), kCosmeticKeys.end(), key) != kCosmeticKeys.end()) {
        continue;
      }
      if (path == kTokenizerConfig && key == kTemplateFacet) {
        AddTemplates(value, facets);
        continue;
      }
      facets.values[path + "#" + key] = HashJson(Canonical(key, value));
    }
  }
  return facets;
}

FacetSet FacetsOfGguf(const GgufMetadata& metadata) {
  FacetSet facets;
  facets.from_gguf = true;
  if (metadata.chat_template) {
    facets.values[std::string(kTemplateFacet)] = Sha256Hex(*metadata.chat_template);
  }
  for (const auto& [name, text] : metadata.named_chat_templates) {
    facets.values[std::string(kTemplateFacet) + ":" + name] = Sha256Hex(text);
  }
  for (const char* role : {"bos", "eos"}) {
    const std::string r(role);
    if (auto it = metadata.special_token_text.find(r); it != metadata.special_token_text.end()) {
      facets.values["tokenizer_config.json#" + r + "_token"] = HashJson(json(it->second));
    }
    if (auto it = metadata.special_token_ids.find(r); it != metadata.special_token_ids.end()) {
      facets.values["config.json#" + r + "_token_id"] = HashJson(json(it->second));
    }
  }
  if (metadata.add_bos_token) {
    facets.values["tokenizer_config.json#add_bos_token"] = HashJson(json(*metadata.add_bos_token));
  }
  if (metadata.add_eos_token) {
    facets.values["tokenizer_config.json#add_eos_token"] = HashJson(json(*metadata.add_eos_token));
  }
  return facets;
}

std::string FacetsToJson(const FacetSet& facets) {
  json out = {{"values", facets.values},
              {"files", facets.files},
              {"gguf", facets.from_gguf},
              {"errors", facets.errors}};
  return out.dump();
}

Result<FacetSet> FacetsFromJson(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [] { return Error::InvalidInput("stored facets are not a facet set"); };
  if (!doc.is_object()) return bad();
  FacetSet facets;
  try {
    facets.values = doc.value("values", json::object()).get<std::map<std::string, std::string>>();
    facets.files = doc.value("files", json::array()).get<std::set<std::string>>();
    facets.from_gguf = doc.value("gguf", false);
    facets.errors = doc.value("errors", json::object()).get<std::map<std::string, std::string>>();
  } catch (const json::exception&) {
    return bad();
  }
  return facets;
}

}  // namespace hubwatch::derivatives
