#pragma once

// The Hub's behaviour, without the network: a parsed request in, a response description out.
// Routing, auth and gating, rate-limit buckets, fault rules, the request log and repo
// mutations live here; the Beast server only moves bytes. Split over hub_state.cc (routing,
// auth, rate limits), hub_control.cc (faults, mutations, /_fakehub/), hub_api.cc (JSON endpoints),
// listing.cc (GET /api/models), hub_events.cc (pushes, heads landing, webhook payloads) and
// hub_files.cc (resolve, raw, CDN content).
//
// Thread safety: every public method locks; the server thread, the webhook thread and test
// threads share it. The webhook sink is called with the lock held: it must only queue.

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "tests/fakehub/churn.h"
#include "tests/fakehub/fakehub.h"

namespace hubwatch::fakehub {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct FakeRequest {
  std::string server = "hub";  // which listener
  std::string method;
  std::string path;   // raw, undecoded
  std::string query;  // raw, after '?'
  HeaderList headers;
  std::string body;
  uint64_t connection = 0;
  std::optional<std::string> Header(std::string_view name) const;
};

enum class WireFault { kNone, kReset, kTruncate, kWrongLength };

struct FakeResponse {
  int status = 200;
  HeaderList headers;
  std::string body;
  BlobPtr blob;  // when set, the body is bytes [begin, end) of this blob, streamed
  uint64_t begin = 0;
  uint64_t end = 0;
  bool huge_header_claim = false;  // bytes 0..7 of the blob claim a 10 GB header
  bool head = false;               // HEAD: Content-Length of the entity, no body
  WireFault wire = WireFault::kNone;
  std::chrono::milliseconds delay{0};
  uint64_t body_size() const { return blob ? end - begin : body.size(); }
  void Set(std::string name, std::string value);
};

class HubState {
 public:
  HubState(FakeHubOptions options, std::vector<Repo> repos);
  void SetOrigins(std::string hub, std::string cdn);

  FakeResponse Handle(const FakeRequest& request);

  void AddFault(FaultRule rule);
  void ClearFaults();
  std::vector<LoggedRequest> Log() const;
  void ClearLog();
  Status SuperSquash(const std::string& repo, const std::string& branch, std::string message);
  Status DeleteRepo(const std::string& repo);
  Status SetGated(const std::string& repo, std::optional<std::string> mode);
  Status SetDisabled(const std::string& repo, bool disabled);
  Status RenameRepo(const std::string& from, const std::string& to);
  Status PushCommit(const std::string& repo, const std::map<std::string, std::string>& files,
                    const std::vector<std::string>& removed, const std::string& title,
                    const std::string& message, std::string* new_sha);
  void AdvanceReplayClock(std::chrono::seconds by);
  void ResetRateLimits();
  void SetRelativeLinks(bool relative);
  size_t repo_count() const;
  // Serves `repos` from now on, beside the others (ids must be new). InvalidInput when one is
  // served already; then none is added.
  Status AddRepos(std::vector<Repo> repos);
  // `count` spam children of `upstream` (synthetic.h, GenerateSpamChildren), the newest dated
  // now; their ids.
  Result<std::vector<std::string>> AddSpamChildren(const std::string& upstream, int count,
                                                   const std::string& relation);

  // Webhooks (hub_events.cc). The sink receives each payload, in order; nullptr = none. Tick()
  // notices heads that moved on the replay clock (the server calls it every 50 ms). AppendLog()
  // records a delivery.
  void SetWebhookSink(std::function<void(std::string)> sink);
  void Tick();
  void AppendLog(LoggedRequest entry);

 private:
  using Query = std::multimap<std::string, std::string>;
  struct Caller {
    const FakeUser* user = nullptr;
    bool bad_token = false;
  };
  struct RepoMatch {
    Repo* repo = nullptr;
    std::string requested_id;  // as in the path (an old name when renamed)
    size_t segments = 0;       // path segments the id used
  };

  // hub_state.cc (all REQUIRE mutex_ held)
  FakeResponse Route(const FakeRequest& request, const Caller& caller);
  FakeResponse Control(const FakeRequest& request);
  std::optional<FakeResponse> ApplyFault(const FakeRequest& request, FaultRule** modifier);
  void AddRateLimitHeaders(const FakeRequest& request, FakeResponse& response, bool* over);
  RepoMatch FindRepo(const std::vector<std::string>& segments, size_t first);
  std::optional<FakeResponse> AccessError(const Repo* repo, const std::string& requested_id,
                                          const Caller& caller, bool content) const;
  FakeResponse RenameRedirect(const FakeRequest& request, const RepoMatch& match) const;
  int64_t ReplayNow() const;
  int64_t WallNow() const;    // Unix seconds
  int64_t ChurnNow() const;   // replay: ReplayNow(); static: WallNow() + replay_offset_
  int64_t CommitNow() const;  // replay: ReplayNow(); static: WallNow()
  bool Visible(const Repo& repo, int commit) const;
  int MainHead(const Repo& repo) const;
  int ResolveRevision(const Repo& repo, const std::string& rev) const;
  Repo* FindRepoById(const std::string& id);

  // listing.cc
  FakeResponse ListModels(const FakeRequest& request, const Query& query, bool authenticated);

  Status AddReposLocked(std::vector<Repo> repos);
  FakeResponse SpamControl(const FakeRequest& request);

  // hub_events.cc (all REQUIRE mutex_ held)
  FakeResponse PushControl(const FakeRequest& request);
  // A new repo `id` whose first commit holds `files`, dated now. REQUIRES: the lock; no repo
  // has that id.
  Result<Repo*> CreateLocked(const std::string& id, const std::map<std::string, std::string>& files,
                             const std::string& title, const std::string& message);
  // What the listing shows of `repo`: {"pipeline_tag", "library_name", "tags", "downloads",
  // "likes"}. REQUIRES: the lock.
  Status SetListedModel(Repo& repo, const nlohmann::json& model);
  Status PushLocked(Repo& repo, const std::map<std::string, std::string>& files,
                    const std::vector<std::string>& removed, const std::string& title,
                    const std::string& message, std::string* new_sha);
  Status RenameLocked(const std::string& from, const std::string& to);
  Status DeleteLocked(const std::string& id);
  // Queues an update webhook for every repo whose main head moved since the last call.
  void NoteHeadChanges();
  void Emit(std::string payload);

  // hub_api.cc
  FakeResponse ModelInfo(const FakeRequest& request, const Repo& repo, int commit,
                         const Query& query);
  FakeResponse Commits(const FakeRequest& request, const Repo& repo, const std::string& rev_raw,
                       int commit, const Query& query);
  FakeResponse Tree(const FakeRequest& request, const Repo& repo, const std::string& rev_raw,
                    int commit, const std::string& path, const Query& query);
  FakeResponse Refs(const FakeRequest& request, const Repo& repo, const Query& query);
  FakeResponse JsonWithEtag(const FakeRequest& request, std::string body);
  std::string LinkTo(const std::string& path_and_query) const;

  // hub_files.cc
  FakeResponse Resolve(const FakeRequest& request, const Repo& repo, const std::string& rev_raw,
                       int commit, const std::string& path);
  FakeResponse Raw(const FakeRequest& request, const Repo& repo, int commit,
                   const std::string& path);
  FakeResponse ResolveCache(const FakeRequest& request, const Repo& repo, int commit,
                            const std::string& path);
  FakeResponse Cdn(const FakeRequest& request);
  FakeResponse Content(const FakeRequest& request, const BlobPtr& blob, std::string etag,
                       bool serve_pointer);

  mutable std::mutex mutex_;
  FakeHubOptions options_;
  std::vector<Repo> repos_;
  std::map<std::string, BlobPtr> blobs_by_sha256_;  // for the CDN
  std::string hub_origin_;
  std::string cdn_origin_;
  std::vector<FaultRule> faults_;
  std::vector<LoggedRequest> log_;
  uint64_t next_seq_ = 1;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  int64_t replay_start_ = 0;
  int64_t replay_offset_ = 0;
  std::chrono::steady_clock::time_point window_start_ = std::chrono::steady_clock::now();
  std::map<std::string, int64_t> window_counts_;
  // FaultRule modifiers picked for the request being handled.
  FaultRule* active_modifier_ = nullptr;
  ChurnOptions churn_;
  std::vector<ChurnRepo> churn_pool_;
  std::function<void(std::string)> webhook_sink_;
  std::vector<int> notified_head_;  // per repos_ index: main's head last reported, or -1
  int spam_serial_ = 0;             // the next spam child's serial
  // FindRepo's fast path (a walk of every repo per request made fakehub the bottleneck of an
  // ingest of 100,000 repos): each id and former id -> the repos_ indexes that had it when the
  // index was built. A hit is checked against the repo as it is now; a miss walks every repo and
  // rebuilds the index, so repos added, renamed or deleted since are still found as before.
  std::unordered_map<std::string, std::vector<size_t>> id_index_;
  void BuildIdIndex();
};

// Helpers shared by the hub_*.cc files.
std::string PercentDecode(std::string_view text);
std::string PercentEncode(std::string_view text, bool keep_slash);
std::vector<std::string> SplitPath(std::string_view path);  // raw segments, no empty ones
FakeResponse JsonBody(int status, std::string body);        // application/json
FakeResponse JsonError(int status, const std::string& code, const std::string& message);
const std::set<std::string>& ModelExpandKeys();  // what expand= accepts (hub_api.cc)

}  // namespace hubwatch::fakehub
