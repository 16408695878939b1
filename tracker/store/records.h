#pragma once

// The rows the store keeps, as value types. See schema/migrations/ for the tables.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "estimator/formats/safetensors_header.h"
#include "tracker/diff/change.h"
#include "tracker/diff/manifest.h"

namespace hubwatch::store {

enum class RepoState { kOk, kGated, kRenamed, kDeleted, kDisabled, kErroring };
std::string_view RepoStateName(RepoState s);  // "ok", "gated", ...
bool ParseRepoState(std::string_view name, RepoState& state);

// Who added a repo or a subscription: the configuration ("config"), which also removes it when
// it no longer lists it, or the API ("api"), which the configuration leaves alone.
enum class Source { kConfig, kApi };
std::string_view SourceName(Source s);  // "config", "api": the stored text
std::optional<Source> ParseSource(std::string_view name);

// What started a poll: the schedule with change hints off ("poll") or on ("reconcile"), the
// Hub's model listing ("listing") or a Hub webhook ("webhook"). A repo records the trigger of
// the poll that found its last new revision.
enum class PollTrigger { kPoll, kReconcile, kListing, kWebhook };
std::string_view PollTriggerName(PollTrigger t);  // the stored text
std::optional<PollTrigger> ParsePollTrigger(std::string_view name);

// The state of an outbox row.
enum class DeliveryState { kPending, kDelivered, kFailed };
std::string_view DeliveryStateName(DeliveryState s);  // "pending", "delivered", "failed"
std::optional<DeliveryState> ParseDeliveryState(std::string_view name);

// Filters for listing changes and advisories. Empty / 0 means "any".
struct Query {
  std::string repo{};
  std::string kind{};
  // "since" (since.h), one meaning for both: of revisions committed at or after this Unix time
  // (the Hub's commit time; the first-seen time of a revision without one)...
  int64_t committed_since = 0;
  // ...or of revisions of their repo ingested after this one (a full sha) that are not
  // rewritten away.
  std::string after_revision{};
  int64_t recorded_since = 0;    // changes: recorded by hubwatch (created_at) at or after
  int64_t after_seq = 0;         // advisories: seq > after_seq (the feed's paging cursor)
  std::string modified_since{};  // advisories: modified >= this RFC 3339 time
  // advisories: a full sha of their repo; those whose GIT range holds it (AffectingQuery's
  // semantics), withdrawn ones left out.
  std::string affects{};
  int64_t limit = 0;
};

enum class IngestOutcome { kIngested, kAlreadyPresent };

// What the Hub says of a repo beside its files (model info), as of `fetched_at`.
struct HubInfo {
  std::optional<int64_t> downloads{};  // the Hub's count over the last 30 days
  std::optional<int64_t> likes{};
  std::vector<std::string> tags{};  // as the Hub lists them, at most kMaxHubTags
  int64_t fetched_at = 0;           // 0: never read
};
inline constexpr size_t kMaxHubTags = 64;
inline constexpr size_t kMaxHubTagBytes = 200;

struct RepoRecord {
  std::string id{};                 // "google/gemma-2-9b-it"
  std::vector<std::string> refs{};  // tracked refs
  std::vector<std::string> pins{};  // the revisions its users run (7-40 hex each); AddRepo writes
  RepoState state = RepoState::kOk;
  std::string state_detail{};
  std::optional<std::string> renamed_to{};
  int64_t added_at = 0;
  int64_t last_polled_at = 0;  // 0: never
  // When its first good poll ended; 0: not yet, so the next poll is still its first catch-up
  // (commits from before added_at found then are history). UpdateRepoPoll writes it.
  int64_t caught_up_at = 0;
  // The scheduler's decision (SetNextPoll; AddRepo writes the first): 0 or past, due now.
  int64_t next_poll_at = 0;
  int64_t consecutive_errors = 0;
  int64_t last_reconciled_at = 0;  // the last poll the schedule started with hints on; 0: never
  std::optional<PollTrigger> last_change_found_by{};  // unset: no new revision found yet
  // kConfig: the configuration lists it (and untracks it when it no longer does); kApi: added
  // through the API, left alone by the configuration. AddRepo writes it.
  Source source = Source::kApi;
  HubInfo hub_info{};  // UpdateRepoPoll writes it
  // false: a followed repo that stopped matching its rule, never polled again, its history
  // kept (FollowStore::Untrack); AddRepo tracks it again.
  bool tracked = true;
  // Its first poll records the head it finds as the baseline: no history, no advisory (a repo a
  // follow rule brought without backfill).
  bool baseline = false;
  std::optional<std::string> followed_by{};  // the follow rule that brought it; read only
};

// What the scheduler needs of a tracked repo: a tenth of a RepoRecord, for listing every repo.
struct RepoSchedule {
  std::string id{};
  Source source = Source::kApi;
  int64_t next_poll_at = 0;
};

// A follow rule as stored: its name, where it came from, what it selects and brings (JSON the
// daemon's configuration reads), and when its whole listing was last walked (0: never).
struct FollowRuleRecord {
  std::string name{};
  Source source = Source::kApi;
  std::string spec{};  // JSON text
  int64_t created_at = 0;
  int64_t walked_at = 0;
  int64_t tracked = 0;    // repos it brought that are tracked now; read only
  int64_t untracked = 0;  // repos it brought and untracked since (history kept); read only
};

// "tracked" or "untracked": a follow rule brought a repo, or the repo stopped matching.
struct FollowEvent {
  int64_t seq = 0;  // set by the store; increasing
  std::string repo{};
  std::string kind{};  // "tracked", "untracked"
  std::string rule{};
  std::string sha{};     // the head the listing showed; "" when unknown
  std::string reason{};  // why untracked
  int64_t at = 0;
};

struct RevisionRecord {
  std::string repo{};
  std::string sha{};
  std::vector<std::string> parents{};
  std::string authored_at{};  // RFC 3339, as the Hub gave it
  std::string title{};
  std::string message{};
  std::vector<std::string> authors{};
  std::vector<std::string> refs{};  // tracked refs that reached it
  int64_t first_seen_at = 0;
  int64_t ingest_order = 0;  // set by the store
  bool rewritten_away = false;
};

struct ChangeRecord {
  int64_t id = 0;
  std::string repo{};
  std::string sha{};
  int ordinal = 0;  // order within the revision
  diff::Change change{};
  int64_t created_at = 0;      // when hubwatch recorded it
  std::string
      committed_at{};  // its revision's commit time, RFC 3339 as the Hub gave it ("": unknown)
};

// A revision's estimate. When the estimator could not run on its config.json (a format it does
// not model, a config it refuses, an estimate too large to keep) the record says why instead:
// `estimate` is {"schema": "hubwatch.estimate-unavailable/1", "unavailable": reason} and the
// figures are 0.
struct EstimateRecord {
  std::string repo{};
  std::string sha{};
  nlohmann::json estimate{};  // hubwatch.estimate/1, or the unavailable form
  uint64_t params_total = 0;
  uint64_t params_active = 0;
  double kv_bytes_per_token = 0;
  std::optional<int64_t> parameter_delta{};  // against the headers, when there were headers

  static EstimateRecord Unavailable(std::string repo, std::string sha, std::string reason);
  // The reason when this record is the unavailable form; nullopt for an estimate.
  std::optional<std::string> UnavailableReason() const;
};
inline constexpr const char kUnavailableEstimateSchema[] = "hubwatch.estimate-unavailable/1";

struct AdvisoryRecord {
  std::string id{};  // x_HUBWATCH-...
  int64_t seq = 0;   // feed order, set by the store
  std::string repo{};
  std::string sha{};
  int64_t change_id = 0;
  std::string kind{};
  nlohmann::json osv{};
  std::string published{};  // RFC 3339 UTC
  std::string modified{};
  std::optional<std::string> withdrawn{};
  std::optional<int64_t> ingested_at{};  // Unix seconds its revision was ingested (store v4+)
};

// An advisory to write with its revision: for the change at `change_ordinal`.
struct NewAdvisory {
  int change_ordinal = 0;
  std::string id{};
  nlohmann::json osv{};
  std::string published{};
  std::string modified{};
  std::vector<std::string> targets{};  // delivery targets: one outbox row each
};

// Everything ingesting one revision writes, in one transaction.
struct RevisionIngest {
  RevisionRecord revision{};
  diff::Manifest manifest{};
  std::vector<std::pair<std::string, std::string>> blobs{};  // git oid -> content (new files)
  std::vector<std::pair<std::string, SafetensorsHeader>> headers{};  // LFS sha256 -> header
  std::vector<diff::Change> changes{};                               // ordinals are the indexes
  std::optional<EstimateRecord> estimate{};
  std::vector<NewAdvisory> advisories{};
  std::vector<std::pair<std::string, std::string>> ref_heads{};  // ref -> sha, after this revision
  std::vector<std::string> rewritten_away{};  // shas of this repo no longer in any ref's history
  // Set: the advisories are held until the repo's burst settles at this time (Unix seconds)
  // instead of being published now; see AdvisoryStore::PublishSettled.
  std::optional<int64_t> settle_at{};
};

}  // namespace hubwatch::store
