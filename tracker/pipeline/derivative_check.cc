#include "tracker/pipeline/derivative_check.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <set>

#include "estimator/base/text.h"
#include "tracker/hub/repo_id.h"
#include "tracker/pipeline/derivative_read.h"

namespace hubwatch::pipeline {
namespace {

using derivatives::Candidate;
using derivatives::EvictionReason;
using derivatives::FacetSet;
using derivatives::Relation;
using derivatives::Signals;

// What one round asks of each derivative, listed or followed (the listing also gets `id`).
const std::vector<std::string>& Expands(bool with_tags) {
  static const std::vector<std::string> listing = {"sha",       "lastModified", "createdAt",
                                                   "downloads", "likes",        "siblings"};
  static const std::vector<std::string> own = {"sha",   "lastModified", "createdAt", "downloads",
                                               "likes", "tags",         "siblings"};
  return with_tags ? own : listing;
}

// How much of the Hub's words an eviction's detail quotes.
constexpr size_t kMaxDetail = 240;

struct Listed {
  Relation relation = Relation::kFinetune;
  std::string sha;
  std::string last_modified;
  std::vector<std::string> files;
  Signals signals;
};

bool IsCommitSha(const std::string& sha) {
  return sha.size() == 40 && std::all_of(sha.begin(), sha.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::vector<std::string> FileNames(const std::vector<hub::Sibling>& siblings) {
  std::vector<std::string> files;
  for (const hub::Sibling& sibling : siblings) files.push_back(sibling.rfilename);
  return files;
}

// One round: the listings one relation after another, the ranking, then the follow-ups and the
// reads, `concurrency` requests at a time.
// A derivative at a new head, waiting for its read: what it is, and its files (the siblings).
struct QueuedRead {
  DerivativeRead read;
  std::vector<std::string> files;
};

class Round : public std::enable_shared_from_this<Round> {
 public:
  Round(hub::HubClient& hub, DerivativeRoundInput input, std::function<void(DerivativeRound)> done)
      : hub_(hub), input_(std::move(input)), done_(std::move(done)) {}

  void Start() { ListNext(0, true); }

 private:
  std::string Tag(Relation relation) const {
    return "base_model:" + std::string(RelationName(relation)) + ":" + input_.upstream;
  }

  void ListNext(size_t relation_index, bool complete_so_far) {
    if (relation_index == input_.relations.size()) return OnListed(complete_so_far);
    const Relation relation = input_.relations[relation_index];
    hub::ListModelsOptions options;
    options.filter = {Tag(relation)};
    options.sort = "downloads";
    options.expand = Expands(false);
    options.page_size = static_cast<int>(std::clamp<size_t>(input_.max, 1, 1000));
    options.max_results = input_.max;
    auto self = shared_from_this();
    hub_.ListModels(std::move(options), [self, relation, relation_index, complete_so_far](
                                            hub::HubResult<std::vector<hub::ModelSummary>> result,
                                            const hub::CallStats& stats) {
      self->round_.requests += stats.requests;
      if (!result.ok()) {
        DerivativeRound round;
        round.listing_error = result.error();
        round.requests = self->round_.requests;
        return self->done_(std::move(round));
      }
      for (hub::ModelSummary& model : *result) {
        // Ids and shas are upstream's words: only well-formed ones are read (and logged).
        if (!model.sha || !IsCommitSha(*model.sha) || model.id == self->input_.upstream ||
            !hub::ValidateRepoId(model.id).ok()) {
          continue;
        }
        self->listed_.try_emplace(
            model.id,
            Listed{relation, *model.sha, model.last_modified.value_or(""),
                   FileNames(model.siblings),
                   derivatives::SignalsOf(model.downloads, model.likes, model.created_at)});
      }
      self->ListNext(relation_index + 1, complete_so_far && result->size() < self->input_.max);
    });
  }

  void OnListed(bool complete) {
    round_.complete = complete;
    std::vector<Candidate> candidates;
    for (const auto& [id, listed] : listed_) {
      round_.listed.push_back(id);
      candidates.push_back({id, listed.relation, listed.signals, input_.known.count(id) > 0});
    }
    for (const auto& [id, known] : input_.known) {
      if (listed_.count(id)) continue;
      if (complete) {
        Evict(id, EvictionReason::kUnlisted, "a complete listing no longer shows it");
      } else {
        candidates.push_back({id, known.relation, known.signals, true});
      }
    }
    const size_t total = candidates.size();
    const size_t max = std::max<size_t>(1, input_.max);
    derivatives::Ranking ranking = derivatives::Rank(std::move(candidates), max);
    for (size_t i = 0; i < ranking.below.size(); ++i) {
      const Candidate& c = ranking.below[i];
      if (!c.known) {
        ++round_.not_admitted;
        continue;
      }
      Evict(c.id, EvictionReason::kRankedOut,
            derivatives::RankedOutDetail(c, ranking.kept.size() + i + 1, total, max,
                                         ranking.kept.back()));
    }
    std::vector<std::string> unlisted;  // kept, stored, not listed: followed by their own request
    for (const Candidate& c : ranking.kept) {
      auto listed = listed_.find(c.id);
      if (listed == listed_.end()) {
        unlisted.push_back(c.id);
        continue;
      }
      const Listed& l = listed->second;
      Admit(c.id, l.relation, l.sha, l.last_modified, l.files, l.signals);
    }
    std::stable_sort(unlisted.begin(), unlisted.end(), [&](const auto& a, const auto& b) {
      return input_.known.at(a).seen_at < input_.known.at(b).seen_at;
    });
    for (std::string& id : unlisted) {
      if (follows_.size() < input_.follow_budget) {
        follows_.push_back(std::move(id));
      } else {
        ++round_.deferred;
      }
    }
    Pump();
  }

  // A followed derivative seen at `sha`: unchanged, or queued to be read there.
  void Admit(const std::string& id, Relation relation, const std::string& sha,
             const std::string& last_modified, std::vector<std::string> files,
             const Signals& signals) {
    round_.seen[id] = signals;
    auto checked = input_.checked_heads.find(id);
    if (checked != input_.checked_heads.end() && checked->second == sha) {
      round_.unchanged.push_back(id);
      return;
    }
    DerivativeRead read;
    read.id = id;
    read.relation = relation;
    read.head = sha;
    read.last_modified = last_modified;
    read.signals = signals;
    queue_.push_back({std::move(read), std::move(files)});
  }

  void Evict(const std::string& id, EvictionReason reason, std::string detail) {
    const KnownDerivative& known = input_.known.at(id);
    round_.evicted.push_back(
        {id, known.relation, reason, Clip(detail, kMaxDetail), known.signals, 0});
  }

  void Follow(const std::string& id) {
    ++in_flight_;
    ++round_.followed;
    hub::ModelInfoOptions options;
    options.expand = Expands(true);
    auto self = shared_from_this();
    hub_.GetModelInfo(id, std::move(options),
                      [self, id](hub::HubResult<hub::ModelInfo> info, const hub::CallStats& stats) {
                        self->round_.requests += stats.requests;
                        self->Followed(id, std::move(info));
                        self->Done();
                      });
  }

  void Followed(const std::string& id, hub::HubResult<hub::ModelInfo> info) {
    const KnownDerivative& known = input_.known.at(id);
    if (!info.ok()) {
      if (info.error().kind == hub::HubErrorKind::kNotFound) {
        return Evict(id, EvictionReason::kNotFound, "its own request: " + info.error().ToString());
      }
      return FollowFailed(id, info.error().ToString());
    }
    if (info->id != id) {
      const bool named = hub::ValidateRepoId(info->id).ok();
      return Evict(
          id, EvictionReason::kNotFound,
          "its own request: the Hub serves " + (named ? info->id : "another repo") + " there now");
    }
    std::optional<Relation> relation;
    for (Relation r : input_.relations) {
      const bool tagged =
          std::find(info->tags.begin(), info->tags.end(), Tag(r)) != info->tags.end();
      if (tagged && (!relation || r == known.relation)) relation = r;
    }
    if (!relation) {
      return Evict(id, EvictionReason::kUntagged,
                   "its own request: no longer tagged " + Tag(known.relation));
    }
    if (!info->sha || !IsCommitSha(*info->sha)) {
      return FollowFailed(id, "the Hub gave no commit sha");
    }
    Admit(id, *relation, *info->sha, info->last_modified.value_or(known.last_modified),
          FileNames(info->siblings),
          derivatives::SignalsOf(info->downloads, info->likes, info->created_at));
  }

  // Kept as stored: an unread check at its stored head, saying why.
  void FollowFailed(const std::string& id, const std::string& why) {
    const KnownDerivative& known = input_.known.at(id);
    DerivativeRead read;
    read.id = id;
    read.relation = known.relation;
    auto checked = input_.checked_heads.find(id);
    if (checked != input_.checked_heads.end()) read.head = checked->second;
    read.last_modified = known.last_modified;
    read.error = "its own request: " + why;
    round_.reads.push_back(std::move(read));
  }

  // Starts follow-ups, then reads, while fewer than `concurrency` are in flight; the round ends
  // when nothing is left. Re-entered by a request that ends at once: the outer call goes on.
  void Pump() {
    if (pumping_) return;
    pumping_ = true;
    const int limit = std::max(1, input_.concurrency);
    while (in_flight_ < limit) {
      if (!follows_.empty()) {
        const std::string id = std::move(follows_.front());
        follows_.pop_front();
        Follow(id);
      } else if (next_ < queue_.size()) {
        StartRead(std::move(queue_[next_++]));
      } else {
        break;
      }
    }
    pumping_ = false;
    if (in_flight_ == 0 && follows_.empty() && next_ >= queue_.size()) Finish();
  }

  void Done() {
    --in_flight_;
    Pump();
  }

  // Reads one queued derivative at its new head (derivative_read.h).
  void StartRead(QueuedRead job) {
    ++in_flight_;
    ReadDerivativeAt(hub_, std::move(job.read), std::move(job.files),
                     [self = shared_from_this()](DerivativeRead read, int requests) {
                       self->round_.requests += requests;
                       self->ReadDone(std::move(read));
                     });
  }

  void ReadDone(DerivativeRead read) {
    round_.reads.push_back(std::move(read));
    Done();
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    std::sort(round_.reads.begin(), round_.reads.end(),
              [](const DerivativeRead& a, const DerivativeRead& b) { return a.id < b.id; });
    std::sort(round_.unchanged.begin(), round_.unchanged.end());
    std::sort(round_.evicted.begin(), round_.evicted.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    done_(std::move(round_));
  }

  hub::HubClient& hub_;
  DerivativeRoundInput input_;
  std::function<void(DerivativeRound)> done_;
  std::map<std::string, Listed> listed_;
  std::deque<std::string> follows_;
  std::vector<QueuedRead> queue_;
  size_t next_ = 0;
  int in_flight_ = 0;
  bool pumping_ = false;
  bool finished_ = false;
  DerivativeRound round_;
};

}  // namespace

void CheckDerivatives(hub::HubClient& hub, DerivativeRoundInput input,
                      std::function<void(DerivativeRound)> done) {
  std::make_shared<Round>(hub, std::move(input), std::move(done))->Start();
}

std::vector<derivatives::AdvisoryLag> LagsOf(const std::vector<derivatives::FixFacets>& fixes,
                                             const FacetSet& facets) {
  std::vector<derivatives::AdvisoryLag> lags;
  for (const derivatives::FixFacets& fix : fixes) {
    lags.push_back({fix.advisory_id, derivatives::Classify(fix, facets), ""});
  }
  return lags;
}

namespace {

// Upstream's facet files at one revision, from the store.
Result<FacetSet> StoredFacets(store::Store& store, const std::string& repo,
                              const std::string& sha) {
  Result<diff::Manifest> manifest = store.revisions().GetManifest(repo, sha);
  if (!manifest.ok()) return manifest.error();
  const std::vector<std::string>& wanted = derivatives::FacetFiles();
  std::map<std::string, std::string> files;
  for (const diff::ManifestEntry& entry : *manifest) {
    if (std::find(wanted.begin(), wanted.end(), entry.path) == wanted.end()) continue;
    Result<std::optional<std::string>> blob = store.revisions().GetBlob(entry.git_oid);
    if (!blob.ok()) return blob.error();
    if (*blob) files[entry.path] = std::move(**blob);
  }
  return derivatives::FacetsOfFiles(files);
}

}  // namespace

Result<std::vector<derivatives::FixFacets>> LoadFixFacets(store::Store& store,
                                                          const std::string& upstream) {
  Result<std::vector<derivatives::UpstreamFix>> fixes = store.derivatives().UpstreamFixes(upstream);
  if (!fixes.ok()) return fixes.error();
  std::map<std::string, FacetSet> by_sha;
  auto facets_at = [&](const std::string& sha) -> Result<const FacetSet*> {
    auto it = by_sha.find(sha);
    if (it == by_sha.end()) {
      Result<FacetSet> read = StoredFacets(store, upstream, sha);
      if (!read.ok()) return read.error();
      it = by_sha.emplace(sha, std::move(read).value()).first;
    }
    return &it->second;
  };
  std::vector<derivatives::FixFacets> out;
  for (const derivatives::UpstreamFix& fix : *fixes) {
    if (fix.parent_sha.empty()) continue;
    Result<const FacetSet*> before = facets_at(fix.parent_sha);
    if (!before.ok()) return before.error();
    Result<const FacetSet*> after = facets_at(fix.sha);
    if (!after.ok()) return after.error();
    derivatives::FixFacets changed = derivatives::FacetsOfFix(fix, **before, **after);
    if (!changed.changed.empty()) out.push_back(std::move(changed));
  }
  return out;
}

}  // namespace hubwatch::pipeline
