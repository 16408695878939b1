#include "tracker/diff/special_tokens.h"

#include <algorithm>
#include <array>

#include "tracker/diff/json_text.h"
#include "tracker/diff/tokenizer_json.h"
#include "tracker/diff/tracked_files.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

// One revision's files, parsed as far as the resolution needs them.
struct Parsed {
  std::optional<json> config;
  std::optional<json> generation_config;
  std::optional<json> tokenizer_config;
  std::optional<json> special_tokens_map;
  std::optional<std::string_view> tokenizer_text;  // views the caller's tokenizer.json
  std::optional<TokenizerJsonLayout> tokenizer;
  json added_tokens;           // tokenizer.json added_tokens (null when absent)
  json post_processor;         // tokenizer.json post_processor
  std::optional<Vocab> vocab;  // read on first need
  std::vector<std::string> unreadable;
};

void ParseObject(const std::optional<std::string>& text, std::string_view name,
                 std::optional<json>& out, std::vector<std::string>& unreadable) {
  if (!text) return;
  Result<json> doc = ParseJson(*text);
  if (doc.ok() && doc->is_object()) {
    out = std::move(doc).value();
  } else {
    unreadable.emplace_back(name);
  }
}

Parsed Parse(const SpecialTokenFiles& files) {
  Parsed p;
  ParseObject(files.config, kConfigFile, p.config, p.unreadable);
  ParseObject(files.generation_config, kGenerationConfigFile, p.generation_config, p.unreadable);
  ParseObject(files.tokenizer_config, kTokenizerConfigFile, p.tokenizer_config, p.unreadable);
  ParseObject(files.special_tokens_map, kSpecialTokensMapFile, p.special_tokens_map, p.unreadable);
  if (files.tokenizer_json) {
    Result<TokenizerJsonLayout> layout = ScanTokenizerJson(*files.tokenizer_json);
    Result<json> added = json();
    Result<json> post = json();
    if (layout.ok()) {
      const std::string_view added_raw = layout->Section("added_tokens");
      const std::string_view post_raw = layout->Section("post_processor");
      if (!added_raw.empty()) added = ParseJson(added_raw);
      if (!post_raw.empty()) post = ParseJson(post_raw);
    }
    if (layout.ok() && added.ok() && post.ok()) {
      p.tokenizer_text = *files.tokenizer_json;
      p.tokenizer = std::move(layout).value();
      p.added_tokens = std::move(added).value();
      p.post_processor = std::move(post).value();
    } else {
      p.unreadable.emplace_back(kTokenizerJsonFile);
    }
  }
  return p;
}

// A token string as the tokenizer files write it: "..." or {"content": "...", ...}; null or
// anything else: none.
std::optional<std::string> TokenString(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object()) {
    auto it = value.find("content");
    if (it != value.end() && it->is_string()) return it->get<std::string>();
  }
  return std::nullopt;
}

// ids from `<x>_token_id`, a number or a list of numbers; false when not set there.
bool ReadIds(const std::optional<json>& doc, const std::string& key, std::vector<int64_t>& ids) {
  if (!doc) return false;
  auto it = doc->find(key);
  if (it == doc->end() || it->is_null()) return false;
  ids.clear();
  if (it->is_number_integer()) {
    ids.push_back(it->get<int64_t>());
    return true;
  }
  if (it->is_array()) {
    for (const json& id : *it) {
      if (id.is_number_integer()) ids.push_back(id.get<int64_t>());
    }
    return true;
  }
  return false;
}

std::optional<int64_t> ContentId(Parsed& p, const std::string& content) {
  if (p.tokenizer) {
    std::optional<int64_t> id;
    if (p.added_tokens.is_array()) {
      for (const json& token : p.added_tokens) {
        if (token.is_object() && token.value("content", json()) == content &&
            token.value("id", json()).is_number_integer()) {
          id = token["id"].get<int64_t>();
        }
      }
    }
    if (id) return id;
    if (!p.vocab) {
      Result<Vocab> vocab = ParseVocab(p.tokenizer->ModelField("vocab"));
      p.vocab = vocab.ok() ? std::move(vocab).value() : Vocab();
    }
    for (const auto& [token, token_id] : p.vocab->tokens) {
      if (token == content) id = token_id;
    }
    if (id) return id;
  }
  if (p.tokenizer_config) {
    auto decoder = p.tokenizer_config->find("added_tokens_decoder");
    if (decoder != p.tokenizer_config->end() && decoder->is_object()) {
      for (auto it = decoder->begin(); it != decoder->end(); ++it) {
        if (TokenString(*it) != content) continue;
        int64_t id = 0;
        JsonCursor cursor(it.key());
        if (cursor.ReadInt64(&id) && cursor.AtEnd()) return id;
      }
    }
  }
  return std::nullopt;
}

// Whether the post_processor's single template starts (BOS) or ends (EOS) with `content`;
// nullopt when there is no TemplateProcessing in it.
std::optional<bool> TemplateAdds(const json& processor, const std::optional<std::string>& content,
                                 bool at_start) {
  if (!processor.is_object()) return std::nullopt;
  const json type = processor.value("type", json());
  if (type == "Sequence" && processor.contains("processors") &&
      processor["processors"].is_array()) {
    std::optional<bool> found;
    for (const json& inner : processor["processors"]) {
      if (auto adds = TemplateAdds(inner, content, at_start)) {
        found = found.value_or(false) || *adds;
      }
    }
    return found;
  }
  if (type != "TemplateProcessing") return std::nullopt;
  auto single = processor.find("single");
  if (single == processor.end() || !single->is_array() || single->empty()) return false;
  const json& piece = at_start ? single->front() : single->back();
  if (!piece.is_object() || !piece.contains("SpecialToken") || !piece["SpecialToken"].is_object()) {
    return false;
  }
  const json id = piece["SpecialToken"].value("id", json());
  return !content || id == *content;
}

EffectiveToken Resolve(Parsed& p, const std::string& name, bool bos, bool eos) {
  EffectiveToken token;
  const std::string id_key = name + "_token_id";
  if (ReadIds(p.generation_config, id_key, token.ids)) {
    token.ids_from = kGenerationConfigFile;
  } else if (ReadIds(p.config, id_key, token.ids)) {
    token.ids_from = kConfigFile;
  } else if (p.config && p.config->contains("text_config") &&
             ReadIds((*p.config)["text_config"], id_key, token.ids)) {
    token.ids_from = std::string(kConfigFile) + " text_config";
  }

  const std::string key = name + "_token";
  const bool legacy = !p.tokenizer_config || !p.tokenizer_config->contains("added_tokens_decoder");
  std::array<std::pair<const std::optional<json>*, std::string_view>, 2> sources = {
      std::pair{&p.tokenizer_config, kTokenizerConfigFile},
      std::pair{&p.special_tokens_map, kSpecialTokensMapFile}};
  if (legacy) std::swap(sources[0], sources[1]);
  for (size_t i = 0; i < (legacy ? 2u : 1u); ++i) {
    const auto& [doc, file] = sources[i];
    if (!*doc || !(*doc)->contains(key)) continue;
    token.content = TokenString((**doc)[key]);
    token.content_from = file;
    break;
  }
  if (token.content) token.content_id = ContentId(p, *token.content);

  if (!bos && !eos) return token;
  const json& tc = p.tokenizer_config ? *p.tokenizer_config : json();
  const json tokenizer_class = tc.is_object() ? tc.value("tokenizer_class", json()) : json();
  const std::string flag = bos ? "add_bos_token" : "add_eos_token";
  const json flag_value = tc.is_object() ? tc.value(flag, json()) : json();
  static const std::array<std::string_view, 6> kRebuilding = {
      "LlamaTokenizer",         "LlamaTokenizerFast", "CodeLlamaTokenizer",
      "CodeLlamaTokenizerFast", "GemmaTokenizer",     "GemmaTokenizerFast"};
  bool rebuilds = false;
  for (std::string_view c : kRebuilding) rebuilds = rebuilds || tokenizer_class == c;
  if (rebuilds) {
    token.added = flag_value.is_boolean() ? flag_value.get<bool>() : bos;
    token.added_from = kTokenizerConfigFile;
  } else if (p.tokenizer) {
    token.added = TemplateAdds(p.post_processor, token.content, bos).value_or(false);
    token.added_from = std::string(kTokenizerJsonFile) + " post_processor";
  } else if (flag_value.is_boolean()) {
    token.added = flag_value.get<bool>();
    token.added_from = kTokenizerConfigFile;
  }
  return token;
}

std::string Ids(const std::vector<int64_t>& ids) {
  constexpr size_t kShown = 16;  // more than fit in 60 characters
  if (ids.empty()) return "none";
  if (ids.size() == 1) return std::to_string(ids[0]);
  const size_t shown = std::min(ids.size(), kShown);
  std::string out = ShortJson(json(std::vector<int64_t>(ids.begin(), ids.begin() + shown)), 60);
  if (shown < ids.size()) out += " (" + std::to_string(ids.size()) + " ids)";
  return out;
}

std::string Content(const EffectiveToken& t) {
  if (!t.content) return "none";
  std::string out = ShortJson(json(*t.content), 40);
  if (t.content_id) out += " (" + std::to_string(*t.content_id) + ")";
  return out;
}

std::optional<Change> TokenChange(const char* label, const char* name, const EffectiveToken& before,
                                  const EffectiveToken& after) {
  if (before.SameValue(after)) return std::nullopt;
  std::vector<std::string> parts;
  json changed = json::array();
  if (before.ids != after.ids) {
    parts.push_back("ids " + Ids(before.ids) + " -> " + Ids(after.ids) +
                    (after.ids_from.empty() ? "" : " (" + after.ids_from + ")"));
    changed.push_back("ids");
  }
  if (before.content != after.content || before.content_id != after.content_id) {
    parts.push_back("token " + Content(before) + " -> " + Content(after));
    changed.push_back("content");
  }
  if (before.added != after.added) {
    parts.push_back(after.added.value_or(false)
                        ? "now added automatically"
                        : (before.added.value_or(false) ? "no longer added automatically"
                                                        : "automatic insertion unknown"));
    changed.push_back("added");
  }
  Change change;
  change.kind = ChangeKind::kSpecialTokens;
  change.impact = Impact::kBehavioral;
  change.summary = std::string("effective ") + label + ": " + JoinSummary(parts, 220);
  change.details = {
      {"token", name}, {"changed", changed}, {"before", ToJson(before)}, {"after", ToJson(after)}};
  // The Llama-3 failure mode: the tokenizer's EOS is not something generation stops on.
  if (std::string_view(name) == "eos" && after.content_id && !after.ids.empty() &&
      std::find(after.ids.begin(), after.ids.end(), *after.content_id) == after.ids.end()) {
    change.details["warnings"] = {"the tokenizer's EOS " + std::to_string(*after.content_id) +
                                  " is not among the generation stop ids"};
  }
  return change;
}

}  // namespace

bool EffectiveToken::SameValue(const EffectiveToken& other) const {
  return ids == other.ids && content == other.content && content_id == other.content_id &&
         added == other.added;
}

json ToJson(const EffectiveToken& token) {
  auto or_null = [](const auto& value) { return value ? json(*value) : json(); };
  const size_t listed = std::min(token.ids.size(), kMaxListedIds);
  bool cut = false;
  json out = {{"ids", std::vector<int64_t>(token.ids.begin(), token.ids.begin() + listed)},
              {"ids_from", token.ids_from.empty() ? json() : json(token.ids_from)},
              {"content", token.content ? CapJson(json(*token.content), 0, &cut) : json()},
              {"content_from", token.content_from.empty() ? json() : json(token.content_from)},
              {"content_id", or_null(token.content_id)},
              {"added", or_null(token.added)},
              {"added_from", token.added_from.empty() ? json() : json(token.added_from)}};
  if (listed < token.ids.size()) out["ids_count"] = token.ids.size();
  if (cut) out["content_truncated"] = true;
  return out;
}

EffectiveSpecialTokens ResolveSpecialTokens(const SpecialTokenFiles& files) {
  Parsed parsed = Parse(files);
  EffectiveSpecialTokens tokens;
  tokens.bos = Resolve(parsed, "bos", true, false);
  tokens.eos = Resolve(parsed, "eos", false, true);
  tokens.pad = Resolve(parsed, "pad", false, false);
  tokens.unreadable = std::move(parsed.unreadable);
  return tokens;
}

std::vector<Change> DiffSpecialTokens(const SpecialTokenFiles& before,
                                      const SpecialTokenFiles& after) {
  return GuardedDiff(kSpecialTokensLabel, [&]() -> std::vector<Change> {
    const EffectiveSpecialTokens old_tokens = ResolveSpecialTokens(before);
    const EffectiveSpecialTokens new_tokens = ResolveSpecialTokens(after);
    // Unreadable files are reported by their own engines.
    if (!old_tokens.unreadable.empty() || !new_tokens.unreadable.empty()) return {};
    std::vector<Change> changes;
    if (auto c = TokenChange("BOS", "bos", old_tokens.bos, new_tokens.bos)) changes.push_back(*c);
    if (auto c = TokenChange("EOS", "eos", old_tokens.eos, new_tokens.eos)) changes.push_back(*c);
    if (auto c = TokenChange("PAD", "pad", old_tokens.pad, new_tokens.pad)) changes.push_back(*c);
    return changes;
  });
}

}  // namespace hubwatch::diff
