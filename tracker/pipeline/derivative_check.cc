#include "tracker/pipeline/derivative_check.h"

#include <algorithm>
#include <memory>
#include <regex>
#include <set>

#include "tracker/hub/repo_id.h"

namespace hubwatch::pipeline {
namespace {

using derivatives::FacetSet;
using derivatives::Relation;

struct Listed {
  Relation relation = Relation::kFinetune;
  std::string sha;
  std::string last_modified;
  std::vector<std::string> files;
};

bool IsCommitSha(const std::string& sha) {
  return sha.size() == 40 && std::all_of(sha.begin(), sha.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool IsSidecar(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.starts_with("mmproj") || lower.starts_with("mtp-") ||
         lower.find("imatrix") != std::string::npos;
}

// One round: the listings one relation after another, then the reads, `concurrency` at a time.
class Round : public std::enable_shared_from_this<Round> {
 public:
  Round(hub::HubClient& hub, DerivativeRoundInput input, std::function<void(DerivativeRound)> done)
      : hub_(hub), input_(std::move(input)), done_(std::move(done)) {}

  void Start() { ListNext(0, true); }

 private:
  void ListNext(size_t relation_index, bool complete_so_far) {
    if (relation_index == input_.relations.size()) return OnListed(complete_so_far);
    const Relation relation = input_.relations[relation_index];
    hub::ListModelsOptions options;
    options.filter = {"base_model:" + std::string(RelationName(relation)) + ":" + input_.upstream};
    options.sort = "lastModified";
    options.expand = {"sha", "lastModified", "tags", "siblings"};
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
        Listed listed{relation, *model.sha, model.last_modified.value_or(""), {}};
        for (const hub::Sibling& sibling : model.siblings)
          listed.files.push_back(sibling.rfilename);
        self->listed_.try_emplace(model.id, std::move(listed));
      }
      self->ListNext(relation_index + 1, complete_so_far && result->size() < self->input_.max);
    });
  }

  void OnListed(bool complete) {
    std::vector<std::pair<std::string, const Listed*>> newest;
    for (const auto& [id, listed] : listed_) newest.emplace_back(id, &listed);
    std::stable_sort(newest.begin(), newest.end(), [](const auto& a, const auto& b) {
      return a.second->last_modified > b.second->last_modified;
    });
    if (newest.size() > input_.max) {
      newest.resize(input_.max);
      complete = false;
    }
    round_.complete = complete;
    for (const auto& [id, listed] : newest) {
      round_.listed.push_back(id);
      auto known = input_.checked_heads.find(id);
      if (known != input_.checked_heads.end() && known->second == listed->sha) {
        round_.unchanged.push_back(id);
      } else {
        DerivativeRead read;
        read.id = id;
        read.relation = listed->relation;
        read.head = listed->sha;
        read.last_modified = listed->last_modified;
        queue_.push_back({std::move(read), listed->files});
      }
    }
    std::sort(round_.listed.begin(), round_.listed.end());
    for (int i = 0; i < std::max(1, input_.concurrency); ++i) NextRead();
    if (in_flight_ == 0) Finish();
  }

  struct Job {
    DerivativeRead read;
    std::vector<std::string> files;
  };

  void NextRead() {
    if (next_ >= queue_.size()) return;
    ++in_flight_;
    auto job = std::make_shared<Job>(std::move(queue_[next_++]));
    std::vector<std::string> facet_files;
    for (const std::string& path : derivatives::FacetFiles()) {
      if (std::find(job->files.begin(), job->files.end(), path) != job->files.end()) {
        facet_files.push_back(path);
      }
    }
    if (!facet_files.empty()) {
      job->read.source = "files";
      return ReadFiles(job, std::move(facet_files), {});
    }
    const std::string gguf = GgufFileToRead(job->files);
    if (!gguf.empty()) {
      job->read.source = "gguf:" + gguf;
      auto self = shared_from_this();
      return hub_.ReadGgufMetadata(
          job->read.id, job->read.head, gguf,
          [self, job](hub::HubResult<hub::GgufMetadataInfo> info, const hub::CallStats& stats) {
            self->round_.requests += stats.requests;
            if (info.ok()) {
              job->read.facets = derivatives::FacetsOfGguf(info->metadata);
            } else {
              job->read.error = info.error().ToString();
            }
            self->Done(std::move(job->read));
          });
    }
    job->read.source = "none";
    job->read.facets = FacetSet{};
    Done(std::move(job->read));
  }

  void ReadFiles(std::shared_ptr<Job> job, std::vector<std::string> paths,
                 std::map<std::string, std::string> contents) {
    if (contents.size() == paths.size()) {
      job->read.facets = derivatives::FacetsOfFiles(contents);
      return Done(std::move(job->read));
    }
    const std::string path = paths[contents.size()];
    auto self = shared_from_this();
    hub_.ResolveGet(
        job->read.id, job->read.head, path,
        [self, job, paths = std::move(paths), contents = std::move(contents), path](
            hub::HubResult<hub::FileContent> file, const hub::CallStats& stats) mutable {
          self->round_.requests += stats.requests;
          if (!file.ok()) {
            job->read.error = path + ": " + file.error().ToString();
            return self->Done(std::move(job->read));
          }
          contents[path] = std::move(file->body);
          self->ReadFiles(job, std::move(paths), std::move(contents));
        },
        /*use_etag_cache=*/false);
  }

  void Done(DerivativeRead read) {
    round_.reads.push_back(std::move(read));
    --in_flight_;
    NextRead();
    if (in_flight_ == 0) Finish();
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    std::sort(round_.reads.begin(), round_.reads.end(),
              [](const DerivativeRead& a, const DerivativeRead& b) { return a.id < b.id; });
    done_(std::move(round_));
  }

  hub::HubClient& hub_;
  DerivativeRoundInput input_;
  std::function<void(DerivativeRound)> done_;
  std::map<std::string, Listed> listed_;
  std::vector<Job> queue_;
  size_t next_ = 0;
  int in_flight_ = 0;
  bool finished_ = false;
  DerivativeRound round_;
};

}  // namespace

void CheckDerivatives(hub::HubClient& hub, DerivativeRoundInput input,
                      std::function<void(DerivativeRound)> done) {
  std::make_shared<Round>(hub, std::move(input), std::move(done))->Start();
}

std::string GgufFileToRead(const std::vector<std::string>& files) {
  static const std::regex kLaterShard(R"(-(\d{5})-of-(\d{5})\.gguf$)");
  std::vector<std::string> candidates;
  for (const std::string& path : files) {
    if (!path.ends_with(".gguf") || IsSidecar(path)) continue;
    std::smatch shard;
    if (std::regex_search(path, shard, kLaterShard) && shard[1] != "00001") continue;
    candidates.push_back(path);
  }
  if (candidates.empty()) return "";
  return *std::min_element(candidates.begin(), candidates.end());
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
