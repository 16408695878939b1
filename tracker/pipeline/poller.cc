#include "tracker/pipeline/poller.h"

#include <chrono>
#include <deque>
#include <set>

#include "tracker/pipeline/fetch_plan.h"
#include "tracker/pipeline/hub_info.h"
#include "tracker/pipeline/poll_outcome.h"
#include "tracker/pipeline/revision_commit.h"
#include "tracker/pipeline/revision_fetch.h"
#include "tracker/pipeline/snapshot_loader.h"

namespace hubwatch::pipeline {
namespace {

// The commit `ref` points to in `refs`; empty when there is no such branch or tag.
std::string HeadOf(const hub::RepoRefs& refs, const std::string& ref) {
  std::string head;
  for (const auto* list : {&refs.branches, &refs.tags}) {
    for (const hub::GitRef& r : *list) {
      if (r.name == ref) head = r.target_commit;
    }
  }
  return head;
}

// Runs work() and then then(): off the loop thread when the options say so, else inline.
void OffloadOrRun(const PollerOptions& o, std::function<void()> work, std::function<void()> then) {
  if (o.offload) {
    o.offload(std::move(work), std::move(then));
  } else {
    work();
    then();
  }
}

// The rewrite a commit list that no longer reaches `previous_head` shows: the revisions stored
// and not yet rewritten away that the new history (`in_history`) lacks.
Result<Rewrite> RewriteOf(store::Store& store, const std::string& repo,
                          const std::string& previous_head, size_t new_history_length,
                          const std::set<std::string>& in_history) {
  Result<std::vector<store::RevisionRecord>> old = store.revisions().ListRevisions(repo);
  if (!old.ok()) return old.error();
  Rewrite r;
  for (const store::RevisionRecord& o : *old) {
    if (!o.rewritten_away && !in_history.count(o.sha)) r.rewritten_away.push_back(o.sha);
  }
  r.previous_head = previous_head;
  r.new_history_length = new_history_length;
  return r;
}

// No tracked ref of `record` has a head in the store: the Hub's 404 cannot mean "deleted since".
bool NoRefHead(store::Store& store, const store::RepoRecord& record) {
  for (const std::string& ref : record.refs) {
    Result<std::optional<std::string>> head = store.repos().GetRefHead(record.id, ref);
    if (!head.ok() || *head) return false;
  }
  return true;
}

// The commits of `list` the store does not hold yet, oldest first; `in_history` gets every
// commit listed.
Result<std::deque<hub::CommitInfo>> NewCommits(store::Store& store, const std::string& repo,
                                               const hub::CommitList& list,
                                               std::set<std::string>& in_history) {
  std::deque<hub::CommitInfo> fresh;
  for (auto it = list.commits.rbegin(); it != list.commits.rend(); ++it) {
    in_history.insert(it->id);
    Result<bool> known = store.revisions().HasRevision(repo, it->id);
    if (!known.ok()) return known.error();
    if (!*known) fresh.push_back(*it);
  }
  return fresh;
}

// What a ref's commit list brings: the commits to ingest, oldest first; the rewrite when the list
// no longer reaches the ref's stored head (`cursor`); the snapshot of that head, the base of the
// first diff (none for a ref never read).
struct NewHistory {
  std::deque<hub::CommitInfo> commits;
  std::optional<Rewrite> rewrite;
  std::optional<Snapshot> base;
};

Result<NewHistory> ReadNewHistory(store::Store& store, const std::string& repo,
                                  const std::string& cursor, const hub::CommitList& list) {
  NewHistory out;
  std::set<std::string> in_history;
  Result<std::deque<hub::CommitInfo>> fresh = NewCommits(store, repo, list, in_history);
  if (!fresh.ok()) return fresh.error();
  out.commits = std::move(fresh).value();
  if (cursor.empty()) return out;
  if (!list.reached_stop_commit) {
    Result<Rewrite> r = RewriteOf(store, repo, cursor, list.commits.size(), in_history);
    if (!r.ok()) return r.error();
    out.rewrite = std::move(r).value();
  }
  Result<Snapshot> base = LoadSnapshot(store, repo, cursor);
  if (!base.ok()) return base.error();
  out.base = std::move(base).value();
  return out;
}

}  // namespace

class Poller::RepoPoll : public std::enable_shared_from_this<RepoPoll> {
 public:
  RepoPoll(Poller& owner, std::string repo, store::PollTrigger trigger,
           std::function<void(PollReport)> done)
      : p_(owner), o_(owner.options_), repo_(std::move(repo)), done_(std::move(done)) {
    report_.repo = repo_;
    report_.trigger = trigger;
  }

  void Start() {
    Result<std::optional<store::RepoRecord>> record = p_.store_.repos().GetRepo(repo_);
    if (!record.ok() || !*record || !(*record)->tracked) {
      return FailLocal(record.ok() ? "not a tracked repo" : record.error().message);
    }
    record_ = **record;
    stored_ = record_;
    report_.first_poll = record_.caught_up_at == 0;
    p_.hub_.Refs(repo_, false, Then<hub::RepoRefs>(&RepoPoll::OnRefs));
  }

 private:
  // A Hub callback: counts the call, ends the poll on an error, else goes on with `next`.
  template <class T, class Next>
  hub::HubCallback<T> Then(Next next) {
    return [self = shared_from_this(), next](hub::HubResult<T> r, const hub::CallStats& s) {
      AddStats(self->report_.stats, s);
      if (!r.ok()) return self->FailHub(r.error());
      ((*self).*next)(std::move(r).value());
    };
  }

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
      const std::string head = HeadOf(refs, ref);
      if (head.empty()) return FailLocal("tracked ref \"" + ref + "\" does not exist");
      Result<std::optional<std::string>> cursor = p_.store_.repos().GetRefHead(repo_, ref);
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
    Result<std::optional<std::string>> cursor = p_.store_.repos().GetRefHead(repo_, ref_);
    if (!cursor.ok()) return FailLocal(cursor.error().message);
    cursor_ = cursor->value_or("");
    Result<bool> known = p_.store_.revisions().HasRevision(repo_, m.head);
    if (!known.ok()) return FailLocal(known.error().message);
    if (*known) {  // the ref moved to a revision already ingested through another ref
      if (Status s = p_.store_.repos().SetRefHead(repo_, ref_, m.head, Now()); !s.ok()) {
        return FailLocal(s.error().message);
      }
      return NextRef();
    }
    hub::CommitsOptions options;
    options.stop_at = cursor_;
    // A baseline: the head as it is now, without the history that led to it.
    if (record_.baseline && cursor_.empty()) options.max_commits = 1;
    p_.hub_.Commits(repo_, m.head, options, Then<hub::CommitList>(&RepoPoll::OnCommits));
  }

  void OnCommits(hub::CommitList list) {
    Result<NewHistory> history = ReadNewHistory(p_.store_, repo_, cursor_, list);
    if (!history.ok()) return FailLocal(history.error().message);
    report_.history_rewritten |= history->rewrite.has_value();
    queue_ = std::move(history->commits);
    rewrite_ = std::move(history->rewrite);
    base_ = std::move(history->base);
    IngestNext();
  }

  void IngestNext() {
    if (queue_.empty()) return NextRef();
    revision_started_ = o_->clock->Now();
    hub::TreeOptions options;
    options.recursive = true;
    p_.hub_.Tree(repo_, queue_.front().id, options,
                 Then<std::vector<hub::TreeEntry>>(&RepoPoll::OnTree));
  }

  void OnTree(const std::vector<hub::TreeEntry>& tree) {
    FetchRevision(p_.hub_, p_.store_, repo_, queue_.front().id, tree, Base(),
                  [self = shared_from_this()](FetchedRevision fetched) {
                    AddStats(self->report_.stats, fetched.stats);
                    if (fetched.hub_error) return self->FailHub(*fetched.hub_error);
                    if (!fetched.local_error.empty()) return self->FailLocal(fetched.local_error);
                    self->current_ = std::move(fetched.snapshot);
                    self->fresh_ = std::move(fetched.fresh);
                    self->Build();
                  });
  }

  // Diffs, estimate and commit run off the loop thread when the options say so; this poll's
  // state is not touched by the loop thread meanwhile (no call of this poll is in flight).
  void Build() {
    auto self = shared_from_this();
    auto built = std::make_shared<CommittedRevision>();
    auto work = [self, built] {
      const RevisionToCommit r{self->repo_,
                               self->ref_,
                               &self->queue_.front(),
                               self->Base(),
                               &self->current_,
                               &self->fresh_,
                               self->rewrite_ ? &*self->rewrite_ : nullptr,
                               self->report_.first_poll ? self->record_.added_at : 0};
      *built = CommitRevision(self->Writer(), r, self->Now(), *self->o_);
    };
    OffloadOrRun(*o_, std::move(work), [self, built] { self->AfterCommit(*built); });
  }

  store::Store& Writer() { return o_->writer ? *o_->writer : p_.store_; }

  void AfterCommit(const CommittedRevision& built) {
    if (!built.error.empty()) return FailLocal(built.error);
    rewrite_.reset();  // the history change is recorded once, on the first revision of the new line
    if (built.ingested) {
      report_.ingest_seconds.push_back(
          std::chrono::duration<double>(o_->clock->Now() - revision_started_).count());
      ++report_.revisions;
      report_.changes += built.changes;
      report_.advisories += built.advisories;
      if (!built.held) report_.published += built.advisories;
      for (const std::string& line : built.lines) Log(line);
    }
    base_ = std::move(current_);
    queue_.pop_front();
    IngestNext();
  }

  // The poll went well: reads the Hub info when due, then records the poll.
  void Finish() {
    if (!HubInfoDue(record_.hub_info, report_.head_moved, Now(), *o_)) return RecordGood();
    ReadHubInfo(p_.hub_, repo_, record_.hub_info, Now(), [self = shared_from_this()](auto read) {
      AddStats(self->report_.stats, read.stats);
      if (read.stopped) return self->FailHub(*read.stopped);
      if (read.failure)
        self->Log(self->repo_ + ": the Hub's counts were not read: " + *read.failure);
      self->record_.hub_info = std::move(read.info);
      self->RecordGood();
    });
  }

  void RecordGood() {
    RecordGoodPoll(record_, report_, Now());
    report_.state = record_.state;
    Persist();
  }

  // Records the repo's polling state, off the loop thread when the options say so, then ends.
  // Publishes what has settled first: a poll that failed still publishes a settled burst, and a
  // burst still settling is reported with its settle time (the scheduler polls again then).
  void Persist() {
    if (o_->write_soon && OnlyPollTimesChanged(p_.store_, report_, record_, stored_)) {
      o_->write_soon(
          [w = &Writer(), record = record_] { return w->repos().UpdateRepoPoll(record); });
      return Done();
    }
    auto self = shared_from_this();
    auto persisted = std::make_shared<Persisted>();
    auto work = [self, persisted] {
      *persisted = PersistPoll(self->Writer(), self->repo_, self->Now(), self->record_);
    };
    auto then = [self, persisted] {
      AddToReport(*persisted, self->report_);
      if (std::optional<std::string> line = SettleLine(self->repo_, *persisted)) self->Log(*line);
      self->Done();
    };
    OffloadOrRun(*o_, std::move(work), std::move(then));
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
    report_.never_seen =
        state == store::RepoState::kDeleted && !record_.id.empty() && NoRefHead(p_.store_, record_);
    report_.error = FailureDetail(why, report_.never_seen);  // callers log the report
    if (record_.id.empty()) return Done();  // not even the repo record could be read
    RecordFailed(record_, state, report_.error, Now());
    report_.consecutive_errors = record_.consecutive_errors;
    Persist();
  }

  void Done() {
    if (auto done = std::exchange(done_, nullptr)) done(report_);
  }

  const Snapshot* Base() const { return base_ ? &*base_ : nullptr; }
  int64_t Now() const { return o_->clock->UnixSeconds(); }

  void Log(const std::string& line) {
    if (o_->log) o_->log(line);
  }

  Poller& p_;
  // The options as they were when the poll started: every step, on either thread, reads these,
  // never the poller's current ones (SetOptions may replace those meanwhile).
  const std::shared_ptr<const PollerOptions> o_;
  const std::string repo_;
  SteadyTime revision_started_{};
  std::function<void(PollReport)> done_;
  PollReport report_;
  store::RepoRecord record_;
  store::RepoRecord stored_;  // record_ as read at the start
  std::deque<Moved> moved_;
  std::string ref_;
  std::string cursor_;
  std::optional<Rewrite> rewrite_;  // until the first revision of the new history is committed
  std::deque<hub::CommitInfo> queue_;
  std::optional<Snapshot> base_;  // the revision before current_; none before the first
  Snapshot current_;
  NewContent fresh_;  // what the current revision's fetches brought
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
  Poll(repo, store::PollTrigger::kPoll, std::move(done));
}

void Poller::Poll(const std::string& repo, store::PollTrigger trigger,
                  std::function<void(PollReport)> done) {
  std::make_shared<RepoPoll>(*this, repo, trigger, std::move(done))->Start();
}

}  // namespace hubwatch::pipeline
