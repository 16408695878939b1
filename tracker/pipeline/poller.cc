#include "tracker/pipeline/poller.h"

#include <chrono>
#include <deque>
#include <map>
#include <set>

#include "tracker/advisory/osv.h"
#include "tracker/advisory/time_text.h"
#include "tracker/pipeline/estimate_step.h"
#include "tracker/pipeline/git_blob.h"
#include "tracker/pipeline/revision_diff.h"
#include "tracker/pipeline/snapshot_loader.h"

namespace hubwatch::pipeline {
namespace {

constexpr int64_t kMaxBackoffS = 24 * 3600;
constexpr int kUnavailableSlowdown = 4;  // deleted / gated / disabled repos poll 4x slower
constexpr char kNeverSeenNote[] =
    "; never seen by this store: not published yet, private, or misspelled";

void AddStats(hub::CallStats& total, const hub::CallStats& s) {
  total.requests += s.requests;
  total.retries += s.retries;
  total.redirects += s.redirects;
  total.not_modified += s.not_modified;
  total.bytes_sent += s.bytes_sent;
  total.bytes_received += s.bytes_received;
  total.waited += s.waited;
}

// Whether a failed file read is about the file (its content is bad: record an error change and
// move on) rather than about the repo or the network (stop; poll again later, losing nothing).
bool IsContentProblem(hub::HubErrorKind kind) {
  return kind == hub::HubErrorKind::kProtocol || kind == hub::HubErrorKind::kEntryNotFound;
}

store::RepoState StateFor(hub::HubErrorKind kind) {
  switch (kind) {
    case hub::HubErrorKind::kNotFound:
      return store::RepoState::kDeleted;
    case hub::HubErrorKind::kGatedAnonymous:
    case hub::HubErrorKind::kGatedNotApproved:
      return store::RepoState::kGated;
    case hub::HubErrorKind::kDisabled:
      return store::RepoState::kDisabled;
    default:
      return store::RepoState::kErroring;
  }
}

// The Hub's commit dates are ISO 8601 ("2024-04-18T15:19:20.000Z"); OSV wants "...Z" UTC.
}  // namespace

class Poller::RepoPoll : public std::enable_shared_from_this<RepoPoll> {
 public:
  RepoPoll(Poller& owner, std::string repo, std::function<void(PollReport)> done)
      : p_(owner), o_(owner.options_), repo_(std::move(repo)), done_(std::move(done)) {
    report_.repo = repo_;
  }

  void Start() {
    Result<std::optional<store::RepoRecord>> record = p_.store_.revisions().GetRepo(repo_);
    if (!record.ok() || !*record) {
      return FailLocal(record.ok() ? "not a tracked repo" : record.error().message);
    }
    record_ = **record;
    stored_ = record_;
    auto self = shared_from_this();
    p_.hub_.Refs(repo_, false, [self](hub::HubResult<hub::RepoRefs> refs, const hub::CallStats& s) {
      AddStats(self->report_.stats, s);
      if (!refs.ok()) return self->FailHub(refs.error());
      self->OnRefs(*refs);
    });
  }

 private:
  struct Moved {
    std::string ref;
    std::string head;
  };

  void OnRefs(const hub::RepoRefs& refs) {
    if (!refs.repo_id.empty() && refs.repo_id != repo_) {
      // Renamed upstream: the Hub redirects the old id, and every call here follows it.
      report_.renamed_to = refs.repo_id;
      if (record_.renamed_to != refs.repo_id) {
        Log(repo_ + ": renamed upstream to " + refs.repo_id + "; following the redirect");
      }
    }
    for (const std::string& ref : record_.refs) {
      std::string head;
      for (const auto* list : {&refs.branches, &refs.tags}) {
        for (const hub::GitRef& r : *list) {
          if (r.name == ref) head = r.target_commit;
        }
      }
      if (head.empty()) return FailLocal("tracked ref \"" + ref + "\" does not exist");
      Result<std::optional<std::string>> cursor = p_.store_.revisions().GetRefHead(repo_, ref);
      if (!cursor.ok()) return FailLocal(cursor.error().message);
      if (*cursor != head) moved_.push_back({ref, head});
    }
    report_.head_moved = !moved_.empty();
    NextRef();
  }

  void NextRef() {
    if (moved_.empty()) return Finish();
    const Moved m = moved_.front();
    moved_.pop_front();
    ref_ = m.ref;
    Result<std::optional<std::string>> cursor = p_.store_.revisions().GetRefHead(repo_, ref_);
    if (!cursor.ok()) return FailLocal(cursor.error().message);
    cursor_ = cursor->value_or("");
    Result<bool> known = p_.store_.revisions().HasRevision(repo_, m.head);
    if (!known.ok()) return FailLocal(known.error().message);
    if (*known) {  // the ref moved to a revision already ingested through another ref
      if (Status s = p_.store_.revisions().SetRefHead(repo_, ref_, m.head, Now()); !s.ok()) {
        return FailLocal(s.error().message);
      }
      return NextRef();
    }
    hub::CommitsOptions options;
    options.stop_at = cursor_;
    auto self = shared_from_this();
    p_.hub_.Commits(repo_, m.head, options,
                    [self](hub::HubResult<hub::CommitList> list, const hub::CallStats& s) {
                      AddStats(self->report_.stats, s);
                      if (!list.ok()) return self->FailHub(list.error());
                      self->OnCommits(std::move(list).value());
                    });
  }

  void OnCommits(hub::CommitList list) {
    rewrite_ = !cursor_.empty() && !list.reached_stop_commit;
    std::set<std::string> in_history;
    queue_.clear();
    for (auto it = list.commits.rbegin(); it != list.commits.rend(); ++it) {
      in_history.insert(it->id);
      Result<bool> known = p_.store_.revisions().HasRevision(repo_, it->id);
      if (!known.ok()) return FailLocal(known.error().message);
      if (!*known) queue_.push_back(*it);
    }
    rewritten_away_.clear();
    if (rewrite_) {
      report_.history_rewritten = true;
      Result<std::vector<store::RevisionRecord>> old = p_.store_.revisions().ListRevisions(repo_);
      if (!old.ok()) return FailLocal(old.error().message);
      for (const store::RevisionRecord& r : *old) {
        if (!r.rewritten_away && !in_history.count(r.sha)) rewritten_away_.push_back(r.sha);
      }
      new_line_length_ = list.commits.size();
    }
    base_sha_ = cursor_;
    base_.reset();
    if (!base_sha_.empty()) {
      Result<Snapshot> base = LoadSnapshot(p_.store_, repo_, base_sha_);
      if (!base.ok()) return FailLocal(base.error().message);
      base_ = std::move(base).value();
    }
    IngestNext();
  }

  void IngestNext() {
    if (queue_.empty()) return NextRef();
    revision_started_ = o_->clock->Now();
    auto self = shared_from_this();
    hub::TreeOptions options;
    options.recursive = true;
    p_.hub_.Tree(repo_, queue_.front().id, options,
                 [self](hub::HubResult<std::vector<hub::TreeEntry>> tree, const hub::CallStats& s) {
                   AddStats(self->report_.stats, s);
                   if (!tree.ok()) return self->FailHub(tree.error());
                   self->OnTree(*tree);
                 });
  }

  void OnTree(const std::vector<hub::TreeEntry>& tree) {
    current_ = Snapshot{};
    current_.sha = queue_.front().id;
    new_blobs_.clear();
    new_headers_.clear();
    for (const hub::TreeEntry& t : tree) {
      if (t.type != "file") continue;
      diff::ManifestEntry e;
      e.path = t.path;
      e.git_oid = t.oid;
      e.size = t.size;
      if (t.lfs) {
        e.lfs_sha256 = t.lfs->oid;
        e.lfs_size = t.lfs->size;
        e.size = t.lfs->size;
      }
      current_.manifest.push_back(std::move(e));
    }
    // Reuse what the previous revision or the store already has; fetch the rest.
    std::vector<const diff::ManifestEntry*> to_fetch, headers_to_read;
    std::set<std::string> header_ids;
    for (const diff::ManifestEntry& e : current_.manifest) {
      if (IsTrackedSmallFile(e)) {
        if (std::optional<std::string> known = KnownBlob(e)) {
          current_.files[e.path] = std::move(*known);
        } else {
          to_fetch.push_back(&e);
        }
      } else if (IsSafetensorsFile(e) && header_ids.insert(*e.lfs_sha256).second) {
        if (std::optional<SafetensorsHeader> known = KnownHeader(*e.lfs_sha256)) {
          current_.headers.emplace(*e.lfs_sha256, std::move(*known));
        } else {
          headers_to_read.push_back(&e);
        }
      }
    }
    if (failed_) return;
    pending_ = to_fetch.size() + headers_to_read.size();
    if (pending_ == 0) return Build();
    auto self = shared_from_this();
    const std::string sha = current_.sha;
    for (const diff::ManifestEntry* e : to_fetch) {
      const std::string path = e->path, oid = e->git_oid;
      p_.hub_.ResolveGet(
          repo_, sha, path,
          [self, path, oid](hub::HubResult<hub::FileContent> r, const hub::CallStats& s) {
            AddStats(self->report_.stats, s);
            if (!r.ok() && !IsContentProblem(r.error().kind)) {
              return self->FailHub(r.error());
            }
            if (!r.ok()) {
              self->current_.unreadable[path] = r.error().ToString();
            } else if (GitBlobOid(r->body) != oid) {
              self->current_.unreadable[path] =
                  "the content served does not match its git blob id " + oid +
                  " (truncated or altered)";
            } else {
              self->new_blobs_.emplace(oid, r->body);
              self->current_.files[path] = std::move(r->body);
            }
            self->OneFetched();
          });
    }
    for (const diff::ManifestEntry* e : headers_to_read) {
      const std::string path = e->path, id = *e->lfs_sha256;
      p_.hub_.ReadSafetensorsHeader(
          repo_, sha, path,
          [self, path, id](hub::HubResult<hub::SafetensorsHeaderInfo> r, const hub::CallStats& s) {
            AddStats(self->report_.stats, s);
            if (!r.ok() && !IsContentProblem(r.error().kind)) return self->FailHub(r.error());
            if (!r.ok()) {
              self->current_.unreadable[path] = r.error().ToString();
            } else {
              self->new_headers_.emplace(id, r->header);
              self->current_.headers.emplace(id, std::move(r->header));
            }
            self->OneFetched();
          });
    }
  }

  std::optional<std::string> KnownBlob(const diff::ManifestEntry& e) {
    if (base_) {
      for (const auto& be : base_->manifest) {
        if (be.path == e.path && be.git_oid == e.git_oid) return base_->File(e.path);
      }
    }
    Result<std::optional<std::string>> blob = p_.store_.revisions().GetBlob(e.git_oid);
    if (!blob.ok()) {
      FailLocal(blob.error().message);
      return std::nullopt;
    }
    return *blob;
  }

  std::optional<SafetensorsHeader> KnownHeader(const std::string& id) {
    if (base_) {
      auto it = base_->headers.find(id);
      if (it != base_->headers.end()) return it->second;
    }
    Result<std::optional<SafetensorsHeader>> h = p_.store_.revisions().GetHeader(id);
    if (!h.ok()) {
      FailLocal(h.error().message);
      return std::nullopt;
    }
    return *h;
  }

  void OneFetched() {
    if (--pending_ == 0 && !failed_) Build();
  }

  // What a revision's build produced, handed from the worker back to the loop thread.
  struct Built {
    std::string error;  // non-empty: the revision was not committed
    bool ingested = false;
    int changes = 0;
    int advisories = 0;
    bool held = false;                 // the advisories wait for the burst to settle
    std::vector<std::string> lines{};  // one per change, for the log
  };

  // Diffs, estimate and commit run off the loop thread when the options say so; this poll's
  // state is not touched by the loop thread meanwhile (no call of this poll is in flight).
  void Build() {
    auto self = shared_from_this();
    auto built = std::make_shared<Built>();
    auto work = [self, built] { *built = self->BuildAndCommit(); };
    auto then = [self, built] { self->AfterCommit(*built); };
    if (o_->offload) {
      o_->offload(std::move(work), std::move(then));
    } else {
      work();
      then();
    }
  }

  store::Store& Writer() { return o_->writer ? *o_->writer : p_.store_; }

  Built BuildAndCommit() {
    store::Store& store = Writer();
    const hub::CommitInfo& commit = queue_.front();
    const int64_t now = Now();
    store::RevisionIngest in;
    in.revision.repo = repo_;
    in.revision.sha = commit.id;
    if (!base_sha_.empty()) in.revision.parents = {base_sha_};
    in.revision.authored_at = commit.date;
    in.revision.title = commit.title;
    in.revision.message = commit.message;
    in.revision.authors = commit.authors;
    in.revision.refs = {ref_};
    in.revision.first_seen_at = now;
    in.manifest = current_.manifest;
    for (auto& [oid, content] : new_blobs_) in.blobs.emplace_back(oid, content);
    for (auto& [id, header] : new_headers_) in.headers.emplace_back(id, header);

    if (rewrite_) {
      in.changes.push_back(HistoryChange(commit.id));
      in.rewritten_away = rewritten_away_;
    }
    for (diff::Change& c : DiffSnapshots(base_ ? &*base_ : nullptr, current_)) {
      in.changes.push_back(std::move(c));
    }

    Result<std::optional<store::EstimateRecord>> previous = store.revisions().LatestEstimate(repo_);
    if (!previous.ok()) return {previous.error().message};
    if (NeedsEstimate(base_ ? &*base_ : nullptr, current_, previous->has_value())) {
      EstimateOutcome e = EstimateSnapshot(repo_, current_);
      if (e.record) {
        if (*previous) {
          if (std::optional<diff::Change> c =
                  EstimateChange((*previous)->estimate, e.record->estimate)) {
            in.changes.push_back(std::move(*c));
          }
        }
        in.estimate = std::move(e.record);
      }
      if (!e.skipped_because.empty() && current_.File("config.json")) {  // recorded unavailable
        Log("no estimate for " + repo_ + "@" + commit.id.substr(0, 7) + ": " + e.skipped_because);
      }
    }

    std::map<std::pair<diff::ChangeKind, std::string>, int> ordinals;
    for (size_t i = 0; i < in.changes.size(); ++i) {
      const diff::Change& c = in.changes[i];
      const int ordinal = ordinals[{c.kind, c.path}]++;
      if (c.impact == diff::Impact::kCosmetic && !o_->advise_cosmetic) continue;
      Result<std::optional<std::string>> introduced =
          store.revisions().LastChangeRevision(repo_, diff::KindName(c.kind), c.path);
      if (!introduced.ok()) return {introduced.error().message};
      advisory::AdvisoryContext ctx;
      ctx.repo = repo_;
      ctx.revision = commit.id;
      ctx.parent = base_sha_;
      ctx.introduced = introduced->value_or("0");
      ctx.published = advisory::Rfc3339(now);  // held ones get their publish time later
      ctx.modified = ctx.published;
      ctx.committed_at = commit.date;
      ctx.ordinal = ordinal;
      if (c.kind == diff::ChangeKind::kEstimate) ctx.estimate_delta = c.details["figures"];
      nlohmann::json osv = advisory::BuildOsv(c, ctx);
      store::NewAdvisory a{static_cast<int>(i), osv["id"].get<std::string>(), std::move(osv),
                           ctx.published, ctx.modified};
      if (o_->outbox_targets) a.targets = o_->outbox_targets(repo_, c);
      in.advisories.push_back(std::move(a));
    }
    in.ref_heads = {{ref_, commit.id}};
    if (const int64_t window = o_->settle_window_s; window > 0) {
      // The commit's own time when it has one (a burst is upstream's), never later than now.
      const int64_t committed = std::min(advisory::ParseTime(commit.date).value_or(now), now);
      in.settle_at = committed + window;
    }

    if (o_->before_commit) o_->before_commit(repo_, commit.id);
    Result<store::IngestOutcome> r = store.revisions().Ingest(in);
    if (!r.ok()) return {r.error().message};
    Built built;
    built.ingested = *r == store::IngestOutcome::kIngested;
    built.changes = static_cast<int>(in.changes.size());
    built.advisories = static_cast<int>(in.advisories.size());
    built.held = in.settle_at.has_value();
    std::map<int, std::string> advised;
    for (const store::NewAdvisory& a : in.advisories) advised[a.change_ordinal] = a.id;
    for (size_t i = 0; i < in.changes.size(); ++i) {
      const diff::Change& c = in.changes[i];
      auto id = advised.find(static_cast<int>(i));
      built.lines.push_back("  " + std::string(diff::ImpactName(c.impact)) + " " +
                            std::string(diff::KindName(c.kind)) +
                            (c.path.empty() ? "" : " (" + c.path + ")") + ": " + c.summary +
                            (id != advised.end() ? " -> " + id->second : ""));
    }
    return built;
  }

  diff::Change HistoryChange(const std::string& new_head) {
    diff::Change history;
    history.kind = diff::ChangeKind::kHistory;
    history.impact = diff::Impact::kBreaking;
    history.summary = ref_ + " rewritten: previous head " + cursor_.substr(0, 7) + " is gone; " +
                      std::to_string(rewritten_away_.size()) +
                      " revision(s) no longer reachable, the new history has " +
                      std::to_string(new_line_length_) + " commit(s)";
    history.details = {{"ref", ref_},
                       {"previous_head", cursor_},
                       {"new_head", new_head},
                       {"rewritten_away", rewritten_away_},
                       {"new_history_length", new_line_length_}};
    return history;
  }

  void AfterCommit(const Built& built) {
    if (!built.error.empty()) return FailLocal(built.error);
    const hub::CommitInfo& commit = queue_.front();
    rewrite_ = false;  // the history change is recorded once, on the first revision of the new line
    if (built.ingested) {
      report_.ingest_seconds.push_back(
          std::chrono::duration<double>(o_->clock->Now() - revision_started_).count());
      ++report_.revisions;
      report_.changes += built.changes;
      report_.advisories += built.advisories;
      if (!built.held) report_.published += built.advisories;
      Log(repo_ + "@" + commit.id.substr(0, 7) + " \"" + commit.title +
          "\": " + std::to_string(built.changes) + " change(s), " +
          std::to_string(built.advisories) + " advisory(ies)" +
          (built.held && built.advisories > 0 ? " held while the burst settles" : ""));
      for (const std::string& line : built.lines) Log(line);
    }
    base_sha_ = commit.id;
    base_ = std::move(current_);
    queue_.pop_front();
    IngestNext();
  }

  void Finish() {
    record_.state = report_.renamed_to ? store::RepoState::kRenamed : store::RepoState::kOk;
    record_.state_detail =
        report_.renamed_to ? "the Hub redirects it to " + *report_.renamed_to : std::string();
    record_.renamed_to = report_.renamed_to;
    report_.state = record_.state;
    record_.consecutive_errors = 0;
    record_.last_polled_at = Now();
    record_.next_poll_at = record_.last_polled_at + o_->interval_s;
    Persist();
  }

  // Records the repo's polling state, off the loop thread when the options say so, then ends.
  // Publishes what has settled first: a poll that failed still publishes a settled burst, and a
  // burst still settling brings the next poll forward to its settle time.
  void Persist() {
    if (o_->write_soon && OnlyPollTimesChanged()) {
      o_->write_soon(
          [w = &Writer(), record = record_] { return w->revisions().UpdateRepoPoll(record); });
      report_.next_poll_at = record_.next_poll_at;
      return Done();
    }
    auto self = shared_from_this();
    auto status = std::make_shared<Status>();
    auto work = [self, status] {
      Result<store::Publication> p =
          self->Writer().advisories().PublishSettled(self->repo_, self->Now());
      if (!p.ok()) {
        *status = p.error();
        return;
      }
      self->released_ = static_cast<int>(p->published);
      self->report_.published += self->released_;
      self->report_.settles_at = p->next_settle_at;
      if (p->next_settle_at && *p->next_settle_at < self->record_.next_poll_at) {
        self->record_.next_poll_at = *p->next_settle_at;
      }
      *status = self->Writer().revisions().UpdateRepoPoll(self->record_);
    };
    auto then = [self, status] {
      self->report_.next_poll_at = self->record_.next_poll_at;
      if (!status->ok() && self->report_.ok) {
        self->report_.ok = false;
        self->report_.error = status->error().message;
      }
      if (self->released_ > 0) {
        self->Log(self->repo_ + ": the burst settled: published " +
                  std::to_string(self->released_) + " held advisory(ies)");
      } else if (self->report_.settles_at) {
        self->Log(self->repo_ + ": advisories held until the burst settles at " +
                  advisory::Rfc3339(*self->report_.settles_at));
      }
      self->Done();
    };
    if (o_->offload) {
      o_->offload(std::move(work), std::move(then));
    } else {
      work();
      then();
    }
  }

  // Whether this poll changed nothing but the repo's poll times: it ended well, the head had
  // not moved, the state is as stored, and the repo holds no advisories (PublishSettled would
  // have nothing to do, now or later).
  bool OnlyPollTimesChanged() {
    if (!report_.ok || report_.head_moved) return false;
    if (record_.state != stored_.state || record_.state_detail != stored_.state_detail ||
        record_.renamed_to != stored_.renamed_to ||
        record_.consecutive_errors != stored_.consecutive_errors) {
      return false;
    }
    Result<bool> held = p_.store_.advisories().HasHeldAdvisories(repo_);
    return held.ok() && !*held;
  }

  void FailHub(const hub::HubError& e) {
    if (e.kind == hub::HubErrorKind::kShutdown) {  // the service is stopping: record nothing
      if (failed_) return;
      failed_ = true;
      report_.ok = false;
      report_.abandoned = true;
      report_.error = "abandoned: the service is stopping";
      return Done();
    }
    Fail(StateFor(e.kind), e.ToString());
  }
  void FailLocal(const std::string& why) { Fail(store::RepoState::kErroring, why); }

  void Fail(store::RepoState state, const std::string& why) {
    if (failed_) return;
    failed_ = true;
    report_.ok = false;
    report_.state = state;
    report_.never_seen = state == store::RepoState::kDeleted && !record_.id.empty() && NeverSeen();
    report_.error = report_.never_seen ? why + kNeverSeenNote : why;  // callers log the report
    if (record_.id.empty()) return Done();  // not even the repo record could be read
    record_.state = state;
    record_.state_detail = report_.error;
    record_.last_polled_at = Now();
    int64_t wait = o_->interval_s;
    if (state == store::RepoState::kErroring) {
      ++record_.consecutive_errors;
      wait = std::min<int64_t>(kMaxBackoffS,
                               wait << std::min<int64_t>(record_.consecutive_errors - 1, 6));
    } else if (!report_.never_seen) {  // one announced before it is published polls as usual
      wait *= kUnavailableSlowdown;
    }
    record_.next_poll_at = record_.last_polled_at + wait;
    Persist();
  }

  // No tracked ref has a head in the store: the Hub's 404 cannot mean "deleted since".
  bool NeverSeen() {
    for (const std::string& ref : record_.refs) {
      Result<std::optional<std::string>> head = p_.store_.revisions().GetRefHead(repo_, ref);
      if (!head.ok() || *head) return false;
    }
    return true;
  }

  void Done() {
    if (done_) {
      auto done = std::move(done_);
      done_ = nullptr;
      done(report_);
    }
  }

  int64_t Now() const { return o_->clock->UnixSeconds(); }

  void Log(const std::string& line) {
    if (o_->log) o_->log(line);
  }

  Poller& p_;
  // The options as they were when the poll started: every step, on either thread, reads these,
  // never the poller's current ones (SetOptions may replace those meanwhile).
  const std::shared_ptr<const PollerOptions> o_;
  const std::string repo_;
  int released_ = 0;  // held advisories Persist published
  SteadyTime revision_started_{};
  std::function<void(PollReport)> done_;
  PollReport report_;
  store::RepoRecord record_;
  store::RepoRecord stored_;  // record_ as read at the start
  std::deque<Moved> moved_;
  std::string ref_;
  std::string cursor_;
  bool rewrite_ = false;
  size_t new_line_length_ = 0;
  std::vector<std::string> rewritten_away_;
  std::deque<hub::CommitInfo> queue_;
  std::string base_sha_;
  std::optional<Snapshot> base_;
  Snapshot current_;
  std::map<std::string, std::string> new_blobs_;
  std::map<std::string, SafetensorsHeader> new_headers_;
  size_t pending_ = 0;
  bool failed_ = false;
};

Poller::Poller(hub::HubClient& hub, store::Store& store, PollerOptions options)
    : hub_(hub),
      store_(store),
      options_(std::make_shared<const PollerOptions>(std::move(options))) {}

void Poller::SetOptions(PollerOptions options) {
  options_ = std::make_shared<const PollerOptions>(std::move(options));
}

Poller::~Poller() = default;

void Poller::Poll(const std::string& repo, std::function<void(PollReport)> done) {
  std::make_shared<RepoPoll>(*this, repo, std::move(done))->Start();
}

}  // namespace hubwatch::pipeline
