#pragma once

// Store: hubwatch's durable state in SQLite (WAL, foreign keys, a busy timeout, prepared
// statements only). Open() applies the migrations of schema/migrations/ in order, tracked by
// PRAGMA user_version, and refuses a database written by a newer hubwatch.
//
// Exactly once: Ingest() writes everything one revision adds - manifest, blobs, headers,
// changes, estimate, advisories, outbox rows and the repo's ref cursors - in one transaction,
// and ingesting a revision already present changes nothing.
//
// Thread safety: a Store owns one connection and must be used from one thread at a time.
// Several Stores (processes) may open the same file; writers wait up to the busy timeout.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/records.h"

struct sqlite3;

namespace hubwatch::store {

struct StoreOptions {
  int busy_timeout_ms = 5000;
  // Tests: cap the database size (PRAGMA max_page_count) to provoke "disk full".
  std::optional<int64_t> max_page_count{};
};

// Filters for listing changes and advisories. Empty / 0 means "any".
struct Query {
  std::string repo{};
  std::string kind{};
  int64_t since = 0;         // changes: created_at >= since; advisories: seq > since
  std::string since_time{};  // advisories: modified >= this RFC 3339 time
  int64_t limit = 0;
};

enum class IngestOutcome { kIngested, kAlreadyPresent };

class Store {
 public:
  // The schema version this binary writes (the number of migrations).
  static int SchemaVersion();

  // Opens (creating if needed) the database at `path` (":memory:" for a private in-memory one).
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             const StoreOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Runs body() in one transaction, so that the writes of many callers share one commit (one
  // fsync): a Transaction inside it is a savepoint. Returns the BEGIN / COMMIT status; when it
  // is not ok nothing body wrote is kept (body does not run when BEGIN fails).
  // REQUIRES: not already inside a transaction on this connection.
  Status Batch(const std::function<void()>& body);
  // Whether a transaction is open: false inside a Batch whose transaction SQLite rolled back
  // on its own (SQLITE_FULL, SQLITE_IOERR, ...), when later writes would autocommit.
  bool InTransaction() const;
  // Runs body() in one transaction (a savepoint inside a Batch): every write it makes is kept,
  // or none when it fails.
  Status Atomically(const std::function<Status()>& body);

  // Repositories.
  Status AddRepo(const RepoRecord& repo);    // inserts, or updates the refs and source of one
  Status RemoveRepo(const std::string& id);  // and everything recorded about it
  Result<std::optional<RepoRecord>> GetRepo(const std::string& id);
  Result<std::vector<RepoRecord>> ListRepos();
  // Polling state: state, detail, error count and next poll time; renamed_to when renamed.
  Status UpdateRepoPoll(const RepoRecord& repo);

  Result<std::optional<std::string>> GetRefHead(const std::string& repo, const std::string& ref);
  // Moves a ref cursor to a revision already ingested (a ref that caught up with another).
  Status SetRefHead(const std::string& repo, const std::string& ref, const std::string& sha,
                    int64_t now);

  // Revisions, newest first; `before`: only those ingested before that sha.
  Result<bool> HasRevision(const std::string& repo, const std::string& sha);
  Result<std::optional<RevisionRecord>> GetRevision(const std::string& repo,
                                                    const std::string& sha);
  Result<std::vector<RevisionRecord>> ListRevisions(const std::string& repo, int64_t limit = 0,
                                                    const std::string& before = {});
  // The most recently ingested revision of a repo that is not rewritten away.
  Result<std::optional<RevisionRecord>> LatestRevision(const std::string& repo);

  Result<diff::Manifest> GetManifest(const std::string& repo, const std::string& sha);
  Result<std::optional<std::string>> GetBlob(const std::string& oid);
  Result<std::optional<SafetensorsHeader>> GetHeader(const std::string& sha256);

  Result<IngestOutcome> Ingest(const RevisionIngest& ingest);

  Result<std::vector<ChangeRecord>> ListChanges(const Query& query);
  Result<std::vector<ChangeRecord>> ChangesOf(const std::string& repo, const std::string& sha);
  // The revision of the most recent change of this kind and path, if any: where the current
  // state of that file (or aspect) first appeared.
  Result<std::optional<std::string>> LastChangeRevision(const std::string& repo,
                                                        std::string_view kind,
                                                        const std::string& path);
  Result<std::optional<EstimateRecord>> GetEstimate(const std::string& repo,
                                                    const std::string& sha);
  // The estimate of the latest revision of `repo` that has one.
  Result<std::optional<EstimateRecord>> LatestEstimate(const std::string& repo);
  Result<std::vector<AdvisoryRecord>> ListAdvisories(const Query& query);
  Result<std::optional<AdvisoryRecord>> GetAdvisory(const std::string& id);
  // HTTP validators for conditional requests.
  struct CachedResponse {
    std::string etag;
    std::string body;
    std::string headers;  // JSON array of [name, value] pairs
  };
  Result<std::optional<CachedResponse>> GetHttpCache(const std::string& url);
  Status PutHttpCache(const std::string& url, const CachedResponse& response, int64_t now);

  // --- HTTP API queries ---
  // Read-only queries behind daemon/api (tracker/store/store_api_queries.cc). Where a query
  // returns records, it finds their keys and reads each through the getters above, so there is
  // one reader per table.

  // The shas of `repo`'s revisions that start with `prefix` (lower-case hex), at most `limit`.
  Result<std::vector<std::string>> FindRevisionShas(const std::string& repo,
                                                    const std::string& prefix, int64_t limit);
  // The changes of the revisions of `repo` ingested after revision `sha` that are not rewritten
  // away, oldest first; `kind` "" = any. Empty when `sha` is not a revision of `repo`.
  Result<std::vector<ChangeRecord>> ChangesAfter(const std::string& repo, const std::string& sha,
                                                 const std::string& kind);
  struct ChangeTally {
    int64_t cosmetic = 0;
    int64_t behavioral = 0;
    int64_t breaking = 0;
  };
  // ChangesAfter(repo, sha, kind), counted by impact.
  Result<ChangeTally> TallyChangesAfter(const std::string& repo, const std::string& sha,
                                        const std::string& kind);
  struct LastChange {
    std::string sha;
    std::string kind;
    std::string authored_at;  // of its revision, RFC 3339 as the Hub gave it ("" if unknown)
    int64_t first_seen_at = 0;
  };
  // The newest behavioral or breaking change of `kind` ("" = any) in a revision of `repo` that is
  // not rewritten away.
  Result<std::optional<LastChange>> LatestChange(const std::string& repo, const std::string& kind);
  // The highest advisory seq so far (0: none).
  Result<int64_t> MaxAdvisorySeq();
  // Advisories newest first (seq descending); query.repo, kind and limit apply.
  Result<std::vector<AdvisoryRecord>> RecentAdvisories(const Query& query);
  // osv.dev query semantics over one repo, withdrawn advisories left out, seq ascending:
  // commit "" = every advisory of the repo; otherwise those whose GIT range holds the commit,
  // in ingest order: introduced <= commit < fixed ("0" or an unknown introduced = the start).
  // An unknown commit matches nothing.
  struct AffectingQuery {
    std::string repo;
    std::string commit;
    int64_t after_seq = 0;  // paging: only seq > after_seq
    int64_t limit = 0;      // 0: no limit
  };
  Result<std::vector<AdvisoryRecord>> AdvisoriesAffecting(const AffectingQuery& query);
  // The repos that have a revision `sha`, by id.
  Result<std::vector<std::string>> ReposWithRevision(const std::string& sha);

  // --- Subscriptions and deliveries ---
  // Webhook subscriptions (migration 0003) and the delivery state of their outbox rows. An
  // outbox row goes to subscription N iff its target is "subscription:N"; ids are never reused.
  // Times are Unix seconds. Secrets are stored as given and never appear in errors.
  struct Subscription {
    int64_t id = 0;  // set by the store
    std::string url{};
    std::string secret{};  // whsec_<base64>
    std::string repos = "*";
    std::vector<std::string> kinds{};  // change kind names; empty: every kind
    std::string min_impact = "behavioral";
    std::string source = "api";  // "config" | "api"
    std::optional<int64_t> disabled_at{};
    std::string disabled_reason{};
    int64_t created_at = 0;
    int64_t updated_at = 0;
  };
  // Inserts `s` (its id is ignored) and returns the new id.
  Result<int64_t> AddSubscription(const Subscription& s);
  Result<std::optional<Subscription>> GetSubscription(int64_t id);
  Result<std::vector<Subscription>> ListSubscriptions();  // by id
  // Deletes it; its pending deliveries become failed. false when there is no such id.
  Result<bool> RemoveSubscription(int64_t id, int64_t now);
  // Marks it disabled with `reason`; its pending deliveries become failed. false: no such id.
  Result<bool> DisableSubscription(int64_t id, const std::string& reason, int64_t now);
  // Makes the config subscriptions exactly `wanted`, matched by URL, in one transaction: new
  // URLs are added, changed ones updated (which re-enables a disabled one: the operator acted),
  // missing ones removed as by RemoveSubscription. API subscriptions are left alone.
  struct SubscriptionSync {
    int added = 0;
    int updated = 0;
    int removed = 0;
    int unchanged = 0;
  };
  Result<SubscriptionSync> SyncConfigSubscriptions(const std::vector<Subscription>& wanted,
                                                   int64_t now);

  // A pending outbox row of an enabled subscription, with what delivering it needs.
  struct Delivery {
    int64_t outbox_id = 0;
    std::string advisory_id{};
    std::string target{};
    int64_t subscription_id = 0;
    std::string url{};
    std::string secret{};
    std::string body{};  // the advisory's OSV JSON, as stored
    int64_t attempts = 0;
    int64_t created_at = 0;
    int64_t next_attempt_at = 0;
  };
  // Up to `limit` rows with next_attempt_at <= now, earliest due first.
  Result<std::vector<Delivery>> DueDeliveries(int64_t now, int64_t limit);
  // The earliest next_attempt_at among them, due or not; nullopt when nothing is pending.
  Result<std::optional<int64_t>> NextDeliveryAt();
  enum class DeliveryOutcome { kDelivered, kRetry, kFailed };
  struct DeliveryAttempt {
    int64_t outbox_id = 0;
    int64_t at = 0;
    std::optional<int> status{};  // the HTTP status, when a response came
    std::string error{};          // why it did not count as delivered
    DeliveryOutcome outcome = DeliveryOutcome::kRetry;
    int64_t next_attempt_at = 0;  // kRetry only
  };
  // Counts one attempt. kRetry and kFailed change only a row that is still pending.
  Status RecordDeliveryAttempt(const DeliveryAttempt& attempt);
  // Pending rows of subscriptions that no longer exist or are disabled (rows a poll queued
  // while the subscription went away) become failed; returns how many.
  Result<int64_t> FailOrphanDeliveries(int64_t now);
  struct OutboxRow {
    int64_t id = 0;
    std::string advisory_id{};
    std::string target{};
    std::string state{};  // pending | delivered | failed
    int64_t attempts = 0;
    int64_t next_attempt_at = 0;
    std::string last_error{};
    std::optional<int64_t> last_status{};
    std::optional<int64_t> last_attempt_at{};
    std::optional<int64_t> delivered_at{};
    int64_t created_at = 0;
  };
  // The outbox rows of subscription `id`, oldest first.
  Result<std::vector<OutboxRow>> ListDeliveries(int64_t subscription_id);
  // Pending rows of enabled subscriptions (the delivery queue depth).
  Result<int64_t> CountPendingDeliveries();
  struct DeliveryTally {
    int64_t pending = 0;
    int64_t delivered = 0;
    int64_t failed = 0;
  };
  // Outbox rows per subscription id and state (subscriptions without rows are absent).
  Result<std::map<int64_t, DeliveryTally>> TallyDeliveries();
  // Holds the pending rows of `advisory_id` until `until` at the earliest (a settling burst).
  Status DeferDeliveries(const std::string& advisory_id, int64_t until);

  // --- Settling bursts ---
  // An Ingest with settle_at holds its revision's advisories back (recorded, not yet in
  // advisories, no outbox rows) and moves the settle time of everything held for the repo to
  // at least settle_at: a burst settles as one (tracker/store/store_advisories.cc).
  struct Publication {
    int64_t published = 0;                  // advisories published by this call
    std::optional<int64_t> next_settle_at;  // when what is still held for the repo settles
  };
  // Publishes `repo`'s held advisories if its burst has settled (settle_at <= now), in ingest
  // order, in one transaction: each gets the next seq, published = modified = `now` in its row
  // and OSV record (database_specific.ingested_at keeps the ingest time) and its outbox rows.
  Result<Publication> PublishSettled(const std::string& repo, int64_t now);
  // Whether the repo has advisories held (a burst not yet published).
  Result<bool> HasHeldAdvisories(const std::string& repo);
  struct HeldBurst {
    std::string repo;
    int64_t settle_at = 0;
    int64_t advisories = 0;
  };
  // Every repo with held advisories, by settle time.
  Result<std::vector<HeldBurst>> HeldBursts();

 private:
  explicit Store(sqlite3* db);
  // Ingest's advisories: published at once, or held when in.settle_at is set.
  Status RecordAdvisories(const RevisionIngest& in, const std::vector<int64_t>& change_ids);
  // One published advisory: its row (the next seq), then one outbox row per target.
  struct PublishedRow {
    const std::string& id;
    const std::string& repo;
    const std::string& sha;
    int64_t change_id;
    const std::string& kind;
    const std::string& osv;  // the record as text
    const std::string& published;
    const std::string& modified;
    int64_t ingested_at;
    const std::vector<std::string>& targets;
    int64_t queued_at;  // the outbox rows' created_at
  };
  Status InsertPublished(const PublishedRow& row);
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hubwatch::store
