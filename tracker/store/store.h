#pragma once

// Store: hubwatch's durable state in SQLite, as one Database and nine facades over it:
// repos() (tracked repos, polling state, ref cursors, the listing's watermark), revisions()
// (revisions, changes, estimates), queries() (the API's read-only questions about history),
// http_cache() (the Hub's responses for conditional requests), advisories() (the feed and
// settling bursts), derivatives() (derivatives of tracked repos, their lags and advisories),
// outbox() (subscriptions and what became of their deliveries), deliveries() (the outbox as
// the webhook deliverer's work queue) and follows() (follow rules, the repos they brought, their
// events); repo_pages() and change_pages() read the lists a page at a time (repo_pages.h,
// change_pages.h). A Store owns them all; the facades borrow the Database.
//
// Thread safety: a Store owns one connection and must be used from one thread at a time.
// Several Stores (processes) may open the same file; writers wait up to the busy timeout.

#include <functional>
#include <memory>
#include <string>

#include "estimator/base/result.h"
#include "tracker/store/advisory_store.h"
#include "tracker/store/change_pages.h"
#include "tracker/store/database.h"
#include "tracker/store/delivery_queue.h"
#include "tracker/store/derivative_store.h"
#include "tracker/store/follow_store.h"
#include "tracker/store/http_cache_store.h"
#include "tracker/store/outbox_store.h"
#include "tracker/store/records.h"
#include "tracker/store/repo_pages.h"
#include "tracker/store/repo_store.h"
#include "tracker/store/revision_queries.h"
#include "tracker/store/revision_store.h"

namespace hubwatch::store {

class Store {
 public:
  // The schema version this binary writes (the number of migrations).
  static int SchemaVersion() { return Database::SchemaVersion(); }

  // Opens (creating if needed) the database at `path` (":memory:" for a private in-memory one),
  // as Database::Open.
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             const StoreOptions& options = {});
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // As Database::Batch, Atomically and InTransaction.
  Status Batch(const std::function<void()>& body) { return db_->Batch(body); }
  Status Atomically(const std::function<Status()>& body) { return db_->Atomically(body); }
  bool InTransaction() const { return db_->InTransaction(); }

  Database& db() { return *db_; }
  RepoStore& repos() { return repos_; }
  RevisionStore& revisions() { return revisions_; }
  RevisionQueries& queries() { return queries_; }
  HttpCacheStore& http_cache() { return http_cache_; }
  AdvisoryStore& advisories() { return advisories_; }
  DerivativeStore& derivatives() { return derivatives_; }
  OutboxStore& outbox() { return outbox_; }
  DeliveryQueue& deliveries() { return deliveries_; }
  FollowStore& follows() { return follows_; }
  RepoPages& repo_pages() { return repo_pages_; }
  ChangePages& change_pages() { return change_pages_; }

 private:
  explicit Store(std::unique_ptr<Database> db)
      : db_(std::move(db)),
        advisories_(*db_),
        repos_(*db_, advisories_),
        revisions_(*db_, advisories_),
        queries_(*db_, revisions_),
        http_cache_(*db_),
        outbox_(*db_),
        deliveries_(*db_),
        derivatives_(*db_, advisories_),
        follows_(*db_),
        repo_pages_(*db_),
        change_pages_(*db_) {}

  std::unique_ptr<Database> db_;
  AdvisoryStore advisories_;
  RepoStore repos_;
  RevisionStore revisions_;
  RevisionQueries queries_;
  HttpCacheStore http_cache_;
  OutboxStore outbox_;
  DeliveryQueue deliveries_;
  DerivativeStore derivatives_;
  FollowStore follows_;
  RepoPages repo_pages_;
  ChangePages change_pages_;
};

}  // namespace hubwatch::store
