#include "daemon/schedule/follow_listing.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_set>

#include "tracker/hub/repo_id.h"

namespace hubwatch::schedule {
namespace {

// The listed sha for an event: 40 lower-case hex digits, or "" (unknown) when it is not one.
std::string ShaOrNone(const std::optional<std::string>& sha) {
  const bool hex = sha && sha->size() == 40 && std::all_of(sha->begin(), sha->end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  return hex ? *sha : "";
}

}  // namespace

std::string LiteralPart(const std::string& glob) {
  std::string best, run;
  int depth = 0;
  for (char c : glob) {
    if (c == '[') ++depth;
    const bool wild = depth > 0 || c == '*' || c == '?' || c == '\\';
    if (c == ']') depth = std::max(0, depth - 1);
    if (wild) {
      run.clear();
      continue;
    }
    run += c;
    if (run.size() > best.size()) best = run;
  }
  return best.size() >= 2 ? best : "";
}

hub::ListModelsOptions WalkOptions(const config::FollowRule& rule, int page_size, int max_pages) {
  hub::ListModelsOptions o;
  o.author = rule.owner;
  o.search = LiteralPart(rule.match);
  o.filter = config::FollowListingFilters(rule);
  o.expand = {"sha", "lastModified", "pipeline_tag", "library_name", "tags", "downloads",
              "likes"};
  o.page_size = page_size;
  o.max_results = static_cast<size_t>(std::max(1, page_size)) *
                  static_cast<size_t>(std::max(1, max_pages));
  o.sort = "lastModified";
  if (rule.owner.empty()) {  // the whole Hub, by the count it is bounded by, down to it
    const bool by_downloads = rule.min_downloads > 0;
    o.sort = by_downloads ? "downloads" : "likes";
    const uint64_t floor = by_downloads ? rule.min_downloads : rule.min_likes;
    o.last_wanted = [by_downloads, floor](const hub::ModelSummary& m) {
      return (by_downloads ? m.downloads : m.likes).value_or(0) < floor;
    };
  }
  return o;
}

std::string FoldedId(std::string_view id) {
  std::string out(id);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

uint64_t RefusalKey(std::string_view id) {
  return static_cast<uint64_t>(std::hash<std::string>{}(FoldedId(id)));
}

FollowSelection SelectFollows(std::vector<FollowState>& rules,
                              const std::vector<hub::ModelSummary>& items,
                              const std::optional<std::string>& walk_rule, int64_t max_total,
                              const std::function<bool(const std::string& id)>& taken) {
  FollowSelection out;
  std::map<std::string, int64_t> added;
  int64_t total = 0;
  for (const FollowState& r : rules) total += r.tracked;
  std::unordered_set<uint64_t> seen;  // RefusalKey of the repos met so far
  std::vector<uint64_t> walk_refused;
  for (const hub::ModelSummary& m : items) {
    // The listing is upstream's text: an id the Hub's rules refuse is never tracked.
    if (!hub::ValidateRepoId(m.id).ok()) continue;
    const uint64_t key = RefusalKey(m.id);
    if (!seen.insert(key).second) continue;  // listed again, maybe in other letters
    bool in_selection = false;
    for (FollowState& r : rules) {
      if (walk_rule && r.rule.name != *walk_rule) continue;
      if (!config::FollowMatches(r.rule, m)) continue;
      if (walk_rule) out.matched.push_back(m.id);
      if (in_selection || taken(m.id)) break;
      const bool over_own = r.tracked + added[r.rule.name] >= r.rule.max_repos;
      if (over_own || total >= max_total) {
        r.refused_by_total = !over_own;
        out.first_refused.emplace(r.rule.name, m.id);
        if (walk_rule) {
          walk_refused.push_back(key);
        } else {
          auto at = std::lower_bound(r.refused.begin(), r.refused.end(), key);
          if ((at == r.refused.end() || *at != key) && r.refused.size() < kMaxRefusedKept) {
            r.refused.insert(at, key);
            ++out.capped;
          }
        }
        continue;  // another rule may still have room
      }
      if (auto at = std::lower_bound(r.refused.begin(), r.refused.end(), key);
          at != r.refused.end() && *at == key) {
        r.refused.erase(at);  // a cap that refused it has room now
      }
      ++added[r.rule.name];
      ++total;
      in_selection = true;
      out.fresh.push_back({m.id, r.rule.name, r.rule.refs, !r.rule.backfill, ShaOrNone(m.sha)});
      break;
    }
  }
  for (FollowState& r : rules) {
    if (walk_rule && r.rule.name == *walk_rule) {  // what the walk refused is what is left out
      std::sort(walk_refused.begin(), walk_refused.end());
      if (walk_refused.size() > kMaxRefusedKept) walk_refused.resize(kMaxRefusedKept);
      for (uint64_t key : walk_refused) {
        out.capped += !std::binary_search(r.refused.begin(), r.refused.end(), key);
      }
      r.refused = std::move(walk_refused);
      walk_refused.clear();
    }
    r.capped = static_cast<int64_t>(r.refused.size());
  }
  return out;
}

}  // namespace hubwatch::schedule
