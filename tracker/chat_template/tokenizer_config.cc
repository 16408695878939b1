#include "tracker/chat_template/tokenizer_config.h"

#include <string>

#include "tracker/chat_template/json_value.h"

namespace hubwatch::chat_template {
namespace {

constexpr const char* kSpecialTokens[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                          "pad_token", "cls_token", "mask_token"};

// A token is "<s>" or {"content": "<s>", "__type": "AddedToken", ...}.
const nlohmann::ordered_json* TokenText(const nlohmann::ordered_json& token) {
  if (token.is_string()) return &token;
  if (token.is_object()) {
    const auto it = token.find("content");
    if (it != token.end() && it->is_string()) return &*it;
  }
  return nullptr;
}

}  // namespace

Result<TemplateRevision> TemplateFromTokenizerConfig(const nlohmann::ordered_json& config) {
  if (!config.is_object()) return Error::InvalidInput("tokenizer_config.json: not a JSON object");
  const auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) {
    return Error::Unsupported("tokenizer_config.json: no chat_template");
  }
  TemplateRevision revision;
  if (it->is_string()) {
    revision.source = it->get<std::string>();
  } else if (it->is_array()) {
    const nlohmann::ordered_json* chosen = nullptr;
    for (const auto& entry : *it) {
      if (!entry.is_object() || !entry.contains("template") || !entry["template"].is_string()) {
        return Error::InvalidInput(
            "tokenizer_config.json: chat_template list entries must be {name, template} objects");
      }
      if (!chosen) chosen = &entry;
      if (entry.value("name", "") == "default") {
        chosen = &entry;
        break;
      }
    }
    if (!chosen) return Error::Unsupported("tokenizer_config.json: chat_template list is empty");
    revision.source = (*chosen)["template"].get<std::string>();
  } else {
    return Error::InvalidInput("tokenizer_config.json: chat_template must be a string or a list");
  }
  for (const char* name : kSpecialTokens) {
    const auto token = config.find(name);
    if (token == config.end()) continue;
    if (const nlohmann::ordered_json* text = TokenText(*token)) {
      revision.special_tokens.emplace_back(name, Value::String(text->get<std::string>()));
    }
  }
  const auto additional = config.find("additional_special_tokens");
  if (additional != config.end() && additional->is_array()) {
    Array tokens;
    for (const auto& token : *additional) {
      if (const nlohmann::ordered_json* text = TokenText(token)) {
        tokens.push_back(Value::String(text->get<std::string>()));
      }
    }
    revision.special_tokens.emplace_back("additional_special_tokens",
                                         Value::MakeArray(std::move(tokens)));
  }
  return revision;
}

}  // namespace hubwatch::chat_template
