#include "daemon/config/follow_rule.h"

#include <fnmatch.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/config/config_json.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::config {

using field::Bad;
using field::CheckKeys;
using field::Describe;
using field::IntInRange;
using field::String;

namespace {

constexpr size_t kMaxFilterText = 200;
constexpr size_t kMaxTags = 16;

// A filter value: printable ASCII without spaces, at most kMaxFilterText characters.
Result<std::string> FilterText(const nlohmann::json& v, const std::string& where) {
  Result<std::string> s = String(v, where);
  if (!s.ok()) return s.error();
  if (s->size() > kMaxFilterText ||
      !std::all_of(s->begin(), s->end(), [](char c) { return c > ' ' && c < 0x7f; })) {
    return Bad(where + " must be at most " + std::to_string(kMaxFilterText) +
               " printable ASCII characters without spaces, got " + Describe(v));
  }
  return s;
}

// A glob as subscriptions take them: printable ASCII, balanced brackets.
Status CheckGlob(const std::string& glob, const std::string& where) {
  if (glob.empty() || glob.size() > 256) return Bad(where + " must be 1 to 256 characters");
  int depth = 0;
  for (char c : glob) {
    if (c < ' ' || c >= 0x7f) return Bad(where + " must be printable ASCII");
    if (c == '[') ++depth;
    if (c == ']') depth = std::max(0, depth - 1);
  }
  if (depth != 0) return Bad(where + " has an unclosed [");
  return Status::Ok();
}

// A rule's name, given or made from the rule: what names it in the API's paths, the store and
// the log. Printable ASCII, spaces inside allowed (a made name says ">=1000 downloads"), at most
// kMaxRuleName bytes: room for a made name from the longest owner and glob. The one check for
// a name written (configuration, API) and a name read back (the store), so that every rule
// accepted is one that can be read again.
constexpr size_t kMaxRuleName = 400;

Status CheckRuleName(const std::string& name, const std::string& where) {
  const bool printable =
      std::all_of(name.begin(), name.end(), [](char c) { return c >= ' ' && c < 0x7f; });
  if (name.empty() || name.size() > kMaxRuleName || !printable || name.front() == ' ' ||
      name.back() == ' ') {
    return Bad(where + " must be 1 to " + std::to_string(kMaxRuleName) +
               " printable ASCII characters, not starting or ending with a space, got " +
               Describe(nlohmann::json(name)));
  }
  return Status::Ok();
}

bool ContainsTag(const std::vector<std::string>& tags, const std::string& tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

}  // namespace

Result<FollowRule> ParseFollowRule(const nlohmann::json& r, const std::string& where) {
  if (!r.is_object()) return Bad(where + " must be an object, e.g. {\"owner\": \"Qwen\"}");
  if (Status s = CheckKeys(r, where,
                           {"name", "owner", "match", "pipeline_tag", "library", "tags",
                            "min_downloads", "min_likes", "refs", "backfill", "max_repos"});
      !s.ok()) {
    return s.error();
  }
  FollowRule rule;
  if (r.contains("owner")) {
    Result<std::string> owner = String(r["owner"], where + ".owner");
    if (!owner.ok()) return owner.error();
    if (Status v = hub::ValidateRepoId(*owner + "/x");
        !v.ok() || owner->find('/') != std::string::npos) {
      return Bad(where + ".owner is not a Hub user or organisation name: " + Describe(r["owner"]));
    }
    rule.owner = *owner;
  }
  if (r.contains("match")) {
    Result<std::string> m = String(r["match"], where + ".match");
    if (!m.ok()) return m.error();
    if (Status s = CheckGlob(*m, where + ".match"); !s.ok()) return s.error();
    rule.match = *m;
  }
  for (auto [key, out] : {std::pair<const char*, std::string*>{"pipeline_tag", &rule.pipeline_tag},
                          {"library", &rule.library}}) {
    if (!r.contains(key)) continue;
    Result<std::string> v = FilterText(r[key], where + "." + key);
    if (!v.ok()) return v.error();
    *out = *v;
  }
  if (r.contains("tags")) {
    const nlohmann::json& tags = r["tags"];
    if (!tags.is_array() || tags.size() > kMaxTags) {
      return Bad(where + ".tags must be a list of at most " + std::to_string(kMaxTags) + " tags");
    }
    for (const nlohmann::json& t : tags) {
      Result<std::string> tag = FilterText(t, where + ".tags[]");
      if (!tag.ok()) return tag.error();
      rule.tags.push_back(*tag);
    }
  }
  for (auto [key, out] : {std::pair<const char*, uint64_t*>{"min_downloads", &rule.min_downloads},
                          {"min_likes", &rule.min_likes}}) {
    if (!r.contains(key)) continue;
    Result<int64_t> n = IntInRange(r[key], where + "." + key, 0, int64_t{1} << 50);
    if (!n.ok()) return n.error();
    *out = static_cast<uint64_t>(*n);
  }
  if (rule.owner.empty() && rule.min_downloads == 0 && rule.min_likes == 0) {
    return Bad(where + " needs an owner, or min_downloads or min_likes (a rule over the whole Hub "
                       "must have a threshold)");
  }
  if (r.contains("refs")) {
    Result<std::vector<std::string>> refs = field::RefList(r["refs"], where + ".refs");
    if (!refs.ok()) return refs.error();
    rule.refs = std::move(refs).value();
  }
  if (r.contains("backfill")) {
    if (!r["backfill"].is_boolean()) return Bad(where + ".backfill must be true or false");
    rule.backfill = r["backfill"].get<bool>();
  }
  if (r.contains("max_repos")) {
    Result<int64_t> n = IntInRange(r["max_repos"], where + ".max_repos", 1, 100'000);
    if (!n.ok()) return n.error();
    rule.max_repos = *n;
  }
  if (r.contains("name")) {
    Result<std::string> name = String(r["name"], where + ".name");
    if (!name.ok()) return name.error();
    rule.name = *name;
  } else {
    rule.name = rule.owner.empty() ? "*" : rule.owner;
    if (rule.match != "*") rule.name += "/" + rule.match;
    if (rule.owner.empty()) {
      rule.name += rule.min_downloads ? ">=" + std::to_string(rule.min_downloads) + " downloads"
                                      : ">=" + std::to_string(rule.min_likes) + " likes";
    }
  }
  if (Status s = CheckRuleName(rule.name, where + ".name"); !s.ok()) return s.error();
  return rule;
}

nlohmann::json FollowRuleJson(const FollowRule& rule) {
  nlohmann::json j = {{"name", rule.name},
                      {"match", rule.match},
                      {"tags", rule.tags},
                      {"min_downloads", rule.min_downloads},
                      {"min_likes", rule.min_likes},
                      {"refs", rule.refs},
                      {"backfill", rule.backfill},
                      {"max_repos", rule.max_repos}};
  if (!rule.owner.empty()) j["owner"] = rule.owner;
  if (!rule.pipeline_tag.empty()) j["pipeline_tag"] = rule.pipeline_tag;
  if (!rule.library.empty()) j["library"] = rule.library;
  return j;
}

bool FollowMatches(const FollowRule& rule, const hub::ModelSummary& m) {
  const size_t slash = m.id.find('/');
  if (slash == std::string::npos) return false;
  const std::string owner = m.id.substr(0, slash);
  if (!rule.owner.empty() && strcasecmp(owner.c_str(), rule.owner.c_str()) != 0) return false;
  const std::string name = m.id.substr(slash + 1);
  if (fnmatch(rule.match.c_str(), name.c_str(), FNM_CASEFOLD) != 0) return false;
  if (!rule.pipeline_tag.empty() && m.pipeline_tag.value_or("") != rule.pipeline_tag &&
      !ContainsTag(m.tags, rule.pipeline_tag)) {
    return false;
  }
  if (!rule.library.empty() && m.library_name.value_or("") != rule.library &&
      !ContainsTag(m.tags, rule.library)) {
    return false;
  }
  for (const std::string& tag : rule.tags) {
    if (!ContainsTag(m.tags, tag)) return false;
  }
  if (rule.min_downloads > 0 && m.downloads.value_or(0) < rule.min_downloads) return false;
  if (rule.min_likes > 0 && m.likes.value_or(0) < rule.min_likes) return false;
  return true;
}

std::vector<std::string> FollowListingFilters(const FollowRule& rule) {
  std::vector<std::string> filters;
  if (!rule.pipeline_tag.empty()) filters.push_back(rule.pipeline_tag);
  if (!rule.library.empty()) filters.push_back(rule.library);
  filters.insert(filters.end(), rule.tags.begin(), rule.tags.end());
  return filters;
}

}  // namespace hubwatch::config
