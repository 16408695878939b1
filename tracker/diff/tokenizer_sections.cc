#include "tracker/diff/tokenizer_sections.h"

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

#include "tracker/diff/flat_index.h"
#include "tracker/diff/json_diff.h"
#include "tracker/diff/json_text.h"
#include "tracker/diff/tokenizer_json.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

std::string Quoted(std::string_view text) { return ShortJson(json(std::string(text)), 40); }

// A token or merge as details show it: cut to kMaxCappedStringBytes (a vocab entry can be as
// long as the file).
std::string Shown(std::string_view text) {
  return CutText(std::string(text.substr(0, kMaxCappedStringBytes + 4)), kMaxCappedStringBytes);
}

// The first kSectionExamples items by `key`, as JSON.
template <class T, class Key, class ToJson>
json Examples(std::vector<T> items, Key key, ToJson to_json) {
  const size_t n = std::min(items.size(), kSectionExamples);
  std::partial_sort(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(n), items.end(),
                    [&](const T& a, const T& b) { return key(a) < key(b); });
  json out = json::array();
  for (size_t i = 0; i < n; ++i) out.push_back(to_json(items[i]));
  return out;
}

// Added tokens listed in details: the first kMaxListedTokens of each kind, and how many there
// were. added_tokens can hold 100k entries; listing them all cost a change row of megabytes.
constexpr size_t kMaxListedTokens = 50;
constexpr size_t kMaxListedTokenBytes = 512;  // of each member of a listed token
// A component section (normalizer, post_processor, ...) shown whole in details, cut to this.
constexpr size_t kMaxComponentBytes = 8 * 1024;

CappedList TokenList() { return CappedList(kMaxListedTokens, kMaxListedTokenBytes); }

struct PairHash {
  size_t operator()(const std::pair<std::string_view, std::string_view>& p) const {
    const size_t a = std::hash<std::string_view>()(p.first);
    return a ^
           (std::hash<std::string_view>()(p.second) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  }
};

}  // namespace

std::optional<SectionDiff> DiffVocabSection(const Vocab& before_vocab, const Vocab& after_vocab) {
  const Vocab* before = &before_vocab;
  const Vocab* after = &after_vocab;

  // token -> position in before.tokens; a later duplicate wins, as in a JSON object.
  const std::hash<std::string_view> hash;
  const auto& old_tokens = before->tokens;
  const FlatIndex index(
      old_tokens.size(), [&](size_t i) { return hash(old_tokens[i].first); },
      [&](size_t i, size_t j) { return old_tokens[i].first == old_tokens[j].first; });
  std::vector<char> seen(before->tokens.size(), 0);
  struct Moved {
    std::string_view token;
    int64_t old_id;
    int64_t new_id;
  };
  std::vector<std::pair<std::string_view, int64_t>> added;
  std::vector<Moved> renumbered;
  size_t scores_changed = 0;
  for (size_t i = 0; i < after->tokens.size(); ++i) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const auto& token = after->tokens[i].first;
    const int64_t id = after->tokens[i].second;
    const size_t at =
        index.Find(hash(token), [&](size_t k) { return old_tokens[k].first == token; });
    if (at == FlatIndex::kNotFound) {
      added.emplace_back(token, id);
      continue;
    }
    seen[at] = 1;
    const int64_t old_id = old_tokens[at].second;
    if (old_id != id) renumbered.push_back({token, old_id, id});
    if (before->unigram && after->unigram && before->scores[at] != after->scores[i]) {
      ++scores_changed;
    }
  }
  std::vector<std::pair<std::string_view, int64_t>> removed;
  for (size_t i = 0; i < before->tokens.size(); ++i) {
    if (seen[i]) continue;
    const std::string_view token = old_tokens[i].first;
    if (index.Find(hash(token), [&](size_t k) { return old_tokens[k].first == token; }) == i) {
      removed.push_back(old_tokens[i]);  // (an earlier duplicate of a token is not a token)
    }
  }
  const bool kind_changed = before->unigram != after->unigram;
  if (added.empty() && removed.empty() && renumbered.empty() && scores_changed == 0 &&
      !kind_changed) {
    return std::nullopt;
  }

  auto by_id = [](const std::pair<std::string_view, int64_t>& t) { return t.second; };
  auto token_json = [](const std::pair<std::string_view, int64_t>& t) {
    return json{{"token", Shown(t.first)}, {"id", t.second}};
  };
  SectionDiff diff;
  diff.impact = renumbered.empty() && !kind_changed ? Impact::kBehavioral : Impact::kBreaking;
  diff.details = {
      {"size_before", before->tokens.size()},
      {"size_after", after->tokens.size()},
      {"added", added.size()},
      {"removed", removed.size()},
      {"renumbered", renumbered.size()},
      {"examples",
       {{"added", Examples(added, by_id, token_json)},
        {"removed", Examples(removed, by_id, token_json)},
        {"renumbered",
         Examples(
             renumbered, [](const Moved& m) { return m.new_id; },
             [](const Moved& m) {
               return json{{"token", Shown(m.token)}, {"old_id", m.old_id}, {"new_id", m.new_id}};
             })}}},
  };
  std::vector<std::string> parts;
  const json& examples = diff.details["examples"];
  auto example = [&](const char* category) {
    const json& first = examples[category][0];
    if (first.contains("old_id")) {
      return " (" + ShortJson(first["token"], 40) + " " + first["old_id"].dump() + " -> " +
             first["new_id"].dump() + ")";
    }
    return " (" + ShortJson(first["token"], 40) + " " + first["id"].dump() + ")";
  };
  if (!added.empty()) parts.push_back("+" + std::to_string(added.size()) + example("added"));
  if (!removed.empty()) parts.push_back("-" + std::to_string(removed.size()) + example("removed"));
  if (!renumbered.empty()) {
    parts.push_back(std::to_string(renumbered.size()) + " renumbered" + example("renumbered"));
  }
  if (before->unigram && after->unigram) {
    diff.details["scores_changed"] = scores_changed;
    if (scores_changed > 0) parts.push_back(std::to_string(scores_changed) + " scores changed");
  }
  if (kind_changed) {
    diff.details["format_before"] = before->unigram ? "unigram" : "map";
    diff.details["format_after"] = after->unigram ? "unigram" : "map";
    parts.push_back(std::string("format ") + (before->unigram ? "unigram list" : "token map") +
                    " -> " + (after->unigram ? "unigram list" : "token map"));
  }
  diff.summary = "vocab";
  if (before->tokens.size() != after->tokens.size()) {
    diff.summary += " " + std::to_string(before->tokens.size()) + " -> " +
                    std::to_string(after->tokens.size()) + " tokens";
  }
  for (size_t i = 0; i < parts.size(); ++i) diff.summary += (i == 0 ? ": " : ", ") + parts[i];
  return diff;
}

std::optional<SectionDiff> DiffMergesSection(const Merges& before_merges,
                                             const Merges& after_merges) {
  const Merges* before = &before_merges;
  const Merges* after = &after_merges;

  using Merge = std::pair<std::string_view, std::string_view>;
  const PairHash hash;
  const auto& old_pairs = before->pairs;
  // merge -> rank in before; of duplicates the first rank counts, so index them last to first.
  const size_t n = old_pairs.size();
  const FlatIndex rank(
      n, [&](size_t i) { return hash(old_pairs[n - 1 - i]); },
      [&](size_t i, size_t j) { return old_pairs[n - 1 - i] == old_pairs[n - 1 - j]; });
  std::vector<char> seen(n, 0);
  std::vector<size_t> common_in_new_order;  // old ranks of the kept merges, in new order
  common_in_new_order.reserve(after->pairs.size());
  std::vector<std::pair<Merge, size_t>> added;
  for (size_t i = 0; i < after->pairs.size(); ++i) {
    const Merge& merge = after->pairs[i];
    const size_t reversed =
        rank.Find(hash(merge), [&](size_t k) { return old_pairs[n - 1 - k] == merge; });
    const size_t old_rank = reversed == FlatIndex::kNotFound ? n : n - 1 - reversed;
    if (old_rank == n || seen[old_rank]) {
      added.emplace_back(merge, i);
      continue;
    }
    seen[old_rank] = 1;
    common_in_new_order.push_back(old_rank);
  }
  std::vector<std::pair<Merge, size_t>> removed;
  size_t reranked = 0;
  size_t k = 0;  // walks common_in_new_order against the kept merges in old order
  for (size_t i = 0; i < n; ++i) {
    if (!seen[i]) {
      removed.emplace_back(before->pairs[i], i);
      continue;
    }
    if (common_in_new_order[k++] != i) ++reranked;
  }
  const bool format_changed =
      before->format != after->format && !before->pairs.empty() && !after->pairs.empty();
  if (added.empty() && removed.empty() && reranked == 0 && !format_changed) {
    return std::nullopt;
  }
  auto by_rank = [](const std::pair<Merge, size_t>& m) { return m.second; };
  auto merge_json = [](const std::pair<Merge, size_t>& m) {
    return json{{"merge", {Shown(m.first.first), Shown(m.first.second)}}, {"rank", m.second}};
  };
  SectionDiff diff;
  diff.impact =
      added.empty() && removed.empty() && reranked == 0 ? Impact::kCosmetic : Impact::kBehavioral;
  diff.details = {{"count_before", before->pairs.size()},
                  {"count_after", after->pairs.size()},
                  {"added", added.size()},
                  {"removed", removed.size()},
                  {"reranked", reranked},
                  {"format_before", MergesFormatName(before->format)},
                  {"format_after", MergesFormatName(after->format)},
                  {"examples",
                   {{"added", Examples(added, by_rank, merge_json)},
                    {"removed", Examples(removed, by_rank, merge_json)}}}};
  std::vector<std::string> parts;
  auto example = [&](const char* category) {
    const json& merge = diff.details["examples"][category][0]["merge"];
    return " (" + Quoted(merge[0].get<std::string>() + " " + merge[1].get<std::string>()) + ")";
  };
  if (!added.empty()) parts.push_back("+" + std::to_string(added.size()) + example("added"));
  if (!removed.empty()) parts.push_back("-" + std::to_string(removed.size()) + example("removed"));
  if (reranked > 0) parts.push_back(std::to_string(reranked) + " re-ranked");
  if (format_changed) {
    parts.push_back("format " + std::string(MergesFormatName(before->format)) + " -> " +
                    std::string(MergesFormatName(after->format)) +
                    (diff.impact == Impact::kCosmetic ? " (same merges)" : ""));
  }
  diff.summary = "merges";
  for (size_t i = 0; i < parts.size(); ++i) diff.summary += (i == 0 ? " " : ", ") + parts[i];
  return diff;
}

namespace {

// id -> entry of an added_tokens array; an Error when it is not one.
Result<std::map<int64_t, const json*>> AddedTokensById(const json& tokens) {
  std::map<int64_t, const json*> by_id;
  if (tokens.is_null()) return by_id;
  if (!tokens.is_array()) return Error::InvalidInput("added_tokens: not an array");
  for (const json& token : tokens) {
    if (!token.is_object() || !token.contains("id") || !token["id"].is_number_integer() ||
        !token.contains("content") || !token["content"].is_string()) {
      return Error::InvalidInput("added_tokens: an entry without an integer id and a content");
    }
    by_id[token["id"].get<int64_t>()] = &token;
  }
  return by_id;
}

}  // namespace

Status CheckAddedTokens(const json& tokens) {
  Result<std::map<int64_t, const json*>> by_id = AddedTokensById(tokens);
  if (!by_id.ok()) return by_id.error();
  return Status::Ok();
}

std::optional<SectionDiff> DiffAddedTokensSection(const json& before, const json& after) {
  Result<std::map<int64_t, const json*>> old_ids = AddedTokensById(before);
  if (!old_ids.ok()) old_ids = std::map<int64_t, const json*>();
  Result<std::map<int64_t, const json*>> new_ids = AddedTokensById(after);
  if (!new_ids.ok()) new_ids = std::map<int64_t, const json*>();
  std::map<std::string, int64_t> old_by_content;
  std::map<std::string, int64_t> new_by_content;
  for (const auto& [id, token] : *old_ids) old_by_content[(*token)["content"]] = id;
  for (const auto& [id, token] : *new_ids) new_by_content[(*token)["content"]] = id;

  CappedList added = TokenList(), removed = TokenList(), renumbered = TokenList(),
             content_changed = TokenList(), flags_changed = TokenList();
  std::vector<std::string> parts;
  for (const auto& [id, token] : *new_ids) {
    const std::string& content = (*token)["content"].get_ref<const std::string&>();
    auto old = old_ids->find(id);
    auto old_content = old_by_content.find(content);
    if (old_content != old_by_content.end() && old_content->second != id) {
      renumbered.Add({{"content", content}, {"old_id", old_content->second}, {"new_id", id}});
    } else if (old == old_ids->end() && old_content == old_by_content.end()) {
      added.Add(*token);
    }
    if (old == old_ids->end()) continue;
    const json& was = *old->second;
    if (was["content"] != content) {
      content_changed.Add({{"id", id}, {"old", was["content"]}, {"new", content}});
      continue;
    }
    json fields = json::object();
    for (const json* side : {&was, token}) {
      for (auto it = side->begin(); it != side->end(); ++it) {
        if (it.key() == "id" || it.key() == "content" || fields.contains(it.key())) continue;
        const json old_value = was.value(it.key(), json());
        const json new_value = token->value(it.key(), json());
        if (old_value != new_value) fields[it.key()] = {old_value, new_value};
      }
    }
    if (!fields.empty()) {
      flags_changed.Add({{"id", id}, {"content", content}, {"fields", fields}});
    }
  }
  for (const auto& [id, token] : *old_ids) {
    const std::string& content = (*token)["content"].get_ref<const std::string&>();
    if (!new_ids->contains(id) && !new_by_content.contains(content)) removed.Add(*token);
  }
  if (added.empty() && removed.empty() && renumbered.empty() && content_changed.empty() &&
      flags_changed.empty()) {
    return std::nullopt;
  }
  auto token_example = [](const json& t) {
    return " (" + Quoted(t["content"].get<std::string>()) + " " + t["id"].dump() + ")";
  };
  if (!added.empty()) {
    parts.push_back("+" + std::to_string(added.count()) + token_example(added.first()));
  }
  if (!removed.empty()) {
    parts.push_back("-" + std::to_string(removed.count()) + token_example(removed.first()));
  }
  if (!renumbered.empty()) {
    const json& r = renumbered.first();
    parts.push_back(std::to_string(renumbered.count()) + " renumbered (" +
                    Quoted(r["content"].get<std::string>()) + " " + r["old_id"].dump() + " -> " +
                    r["new_id"].dump() + ")");
  }
  if (!content_changed.empty()) {
    const json& c = content_changed.first();
    parts.push_back(std::to_string(content_changed.count()) + " content changed (" +
                    c["id"].dump() + " " + Quoted(c["old"].get<std::string>()) + " -> " +
                    Quoted(c["new"].get<std::string>()) + ")");
  }
  if (!flags_changed.empty()) {
    const json& f = flags_changed.first();
    const auto field = f["fields"].begin();
    parts.push_back(std::to_string(flags_changed.count()) + " flags changed (" +
                    Quoted(f["content"].get<std::string>()) + " " + field.key() + " " +
                    ShortJson((*field)[0], 20) + " -> " + ShortJson((*field)[1], 20) + ")");
  }
  SectionDiff diff;
  diff.impact =
      renumbered.empty() && content_changed.empty() ? Impact::kBehavioral : Impact::kBreaking;
  diff.summary = "added_tokens";
  for (size_t i = 0; i < parts.size(); ++i) diff.summary += (i == 0 ? " " : ", ") + parts[i];
  diff.details = ListsJson({{"added", &added},
                            {"removed", &removed},
                            {"renumbered", &renumbered},
                            {"content_changed", &content_changed},
                            {"flags_changed", &flags_changed}});
  diff.details["count_before"] = old_ids->size();
  diff.details["count_after"] = new_ids->size();
  return diff;
}

std::string DescribeComponent(const json& component) {
  if (component.is_null()) return "none";
  if (!component.is_object() || !component.contains("type") || !component["type"].is_string()) {
    return ShortJson(component, 40);
  }
  const std::string type = component["type"];
  if (type == "Sequence") {
    for (const char* list : {"normalizers", "pretokenizers", "processors", "decoders"}) {
      auto it = component.find(list);
      if (it == component.end() || !it->is_array()) continue;
      std::string out = "Sequence[";
      for (size_t i = 0; i < it->size(); ++i) out += (i ? ", " : "") + DescribeComponent((*it)[i]);
      return out + "]";
    }
  }
  if (type == "TemplateProcessing" && component.contains("single") &&
      component["single"].is_array()) {
    std::string out = "TemplateProcessing(";
    bool first = true;
    for (const json& piece : component["single"]) {
      if (!first) out += ' ';
      first = false;
      if (piece.contains("SpecialToken") && piece["SpecialToken"].is_object()) {
        const json id = piece["SpecialToken"].value("id", json());
        out += id.is_string() ? CutText(id.get<std::string>(), 40) : ShortJson(id, 40);
      } else if (piece.contains("Sequence") && piece["Sequence"].is_object()) {
        const json id = piece["Sequence"].value("id", json());
        out += "$" + (id.is_string() ? CutText(id.get<std::string>(), 10) : ShortJson(id, 10));
      } else {
        out += ShortJson(piece, 20);
      }
    }
    return out + ")";
  }
  return type;
}

std::optional<SectionDiff> DiffComponentSection(std::string_view name, const json& before,
                                                const json& after) {
  const std::vector<JsonOp> ops = DiffJson(before, after);
  if (ops.empty()) return std::nullopt;
  SectionDiff diff;
  diff.impact = name == "version" ? Impact::kCosmetic : Impact::kBehavioral;
  OpList op_list;
  for (const JsonOp& op : ops) op_list.Add(op);
  bool cut = false;  // upstream decides how large a component is
  diff.details = {{"before", CapJson(before, kMaxComponentBytes, &cut)},
                  {"after", CapJson(after, kMaxComponentBytes, &cut)},
                  {"ops", std::move(op_list).Take()},
                  {"op_count", ops.size()}};
  if (cut) diff.details["truncated"] = true;
  const std::string old_description = DescribeComponent(before);
  const std::string new_description = DescribeComponent(after);
  if (old_description != new_description) {
    diff.summary = std::string(name) + " " + old_description + " -> " + new_description;
  } else {
    JsonOp first = ops.front();
    first.path = "/" + EscapePointerToken(name) + first.path;
    diff.summary = DescribeOp(first);
    if (ops.size() > 1) diff.summary += " (+" + std::to_string(ops.size() - 1) + " more)";
  }
  return diff;
}

}  // namespace hubwatch::diff
