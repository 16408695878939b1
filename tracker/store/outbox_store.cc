// OutboxStore: webhook subscriptions and what became of their outbox rows.

#include "tracker/store/outbox_store.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

constexpr const char* kSubscriptionColumns =
    "id, url, secret, repos, kinds, min_impact, source, disabled_at, disabled_reason, "
    "created_at, updated_at, backfill";

// The kinds column is a JSON array of strings, as AddSubscription writes it. Anything else is a
// damaged row, an error: read as "no kinds" it would widen the subscription to every kind.
Result<Subscription> ReadSubscription(const Statement& q) {
  Subscription s;
  s.id = q.Int(0);
  s.url = q.Text(1);
  s.secret = q.Text(2);
  s.repos = q.Text(3);
  Result<std::vector<std::string>> kinds =
      StoredStringList(q.Text(4), "the kinds of subscription " + std::to_string(s.id));
  if (!kinds.ok()) return kinds.error();
  s.kinds = std::move(kinds).value();
  const std::string what = "subscription " + std::to_string(s.id);
  const std::optional<diff::Impact> min_impact = diff::ParseImpact(q.Text(5));
  if (!min_impact) return Error::Io("store: the min_impact of " + what + " is damaged");
  s.min_impact = *min_impact;
  const std::optional<Source> source = ParseSource(q.Text(6));
  if (!source) return Error::Io("store: the source of " + what + " is damaged");
  s.source = *source;
  if (!q.IsNull(7)) s.disabled_at = q.Int(7);
  s.disabled_reason = q.Text(8);
  s.created_at = q.Int(9);
  s.updated_at = q.Int(10);
  s.backfill = q.Int(11) != 0;
  return s;
}

// The fields an operator sets; two subscriptions with equal fields need no update.
bool SameFields(const Subscription& a, const Subscription& b) {
  return a.url == b.url && a.secret == b.secret && a.repos == b.repos && a.kinds == b.kinds &&
         a.min_impact == b.min_impact && a.backfill == b.backfill;
}

}  // namespace

Result<int64_t> OutboxStore::AddSubscription(const Subscription& s) {
  HW_PREPARE(q,
             "INSERT INTO subscriptions (url, secret, repos, kinds, min_impact, source, "
             "disabled_at, disabled_reason, created_at, updated_at, backfill) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10)");
  HW_TRY(q.Bind(1, s.url)
             .Bind(2, s.secret)
             .Bind(3, s.repos)
             .Bind(4, DumpJson(nlohmann::json(s.kinds)))
             .Bind(5, diff::ImpactName(s.min_impact))
             .Bind(6, SourceName(s.source))
             .BindOptional(7, s.disabled_at)
             .Bind(8, s.disabled_reason)
             .Bind(9, s.created_at)
             .Bind(10, int64_t{s.backfill})
             .Run("adding a subscription"));
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_.handle()));
}

Result<std::optional<Subscription>> OutboxStore::GetSubscription(int64_t id) {
  static const std::string sql =
      std::string("SELECT ") + kSubscriptionColumns + " FROM subscriptions WHERE id = ?1";
  HW_PREPARE(q, sql);
  q.Bind(1, id);
  return OptionalRow(q, "reading a subscription", ReadSubscription);
}

Result<std::vector<Subscription>> OutboxStore::ListSubscriptions() {
  static const std::string sql =
      std::string("SELECT ") + kSubscriptionColumns + " FROM subscriptions ORDER BY id";
  HW_PREPARE(q, sql);
  return Collect(q, "listing subscriptions", ReadSubscription);
}

Status OutboxStore::FailPendingOf(int64_t id, const std::string& reason, int64_t now) {
  HW_PREPARE(q,
             "UPDATE outbox SET state = 'failed', last_error = ?2, last_attempt_at = "
             "COALESCE(last_attempt_at, ?3) WHERE subscription_id = ?1 AND state = 'pending'");
  return q.Bind(1, id).Bind(2, reason).Bind(3, now).Run("failing pending deliveries");
}

Result<bool> OutboxStore::DeleteSubscription(int64_t id, int64_t now) {
  HW_TRY(FailPendingOf(id, "subscription removed", now));
  HW_PREPARE(q, "DELETE FROM subscriptions WHERE id = ?1");
  HW_TRY(q.Bind(1, id).Run("removing a subscription"));
  return sqlite3_changes(db_.handle()) > 0;
}

Result<bool> OutboxStore::RemoveSubscription(int64_t id, int64_t now) {
  bool removed = false;
  HW_TRY(db_.Atomically([&]() -> Status {
    Result<bool> r = DeleteSubscription(id, now);
    if (!r.ok()) return r.error();
    removed = *r;
    return Status::Ok();
  }));
  return removed;
}

Result<bool> OutboxStore::DisableSubscription(int64_t id, const std::string& reason, int64_t now) {
  bool found = false;
  HW_TRY(db_.Atomically([&]() -> Status {
    HW_PREPARE(q,
               "UPDATE subscriptions SET disabled_at = ?2, disabled_reason = ?3, updated_at = ?2 "
               "WHERE id = ?1");
    HW_TRY(q.Bind(1, id).Bind(2, now).Bind(3, reason).Run("disabling a subscription"));
    found = sqlite3_changes(db_.handle()) > 0;
    return FailPendingOf(id, "subscription disabled: " + reason, now);
  }));
  return found;
}

namespace {

// What makes the config subscriptions among `current` exactly `wanted`, matched by URL.
struct ConfigSyncPlan {
  std::vector<int64_t> remove;                                  // config ones no longer wanted
  std::vector<const Subscription*> add;                         // wanted, new URLs
  std::vector<std::pair<int64_t, const Subscription*>> update;  // (id, wanted) that changed
  int unchanged = 0;
};

Result<ConfigSyncPlan> PlanConfigSync(const std::vector<Subscription>& current,
                                      const std::vector<Subscription>& wanted) {
  ConfigSyncPlan plan;
  std::map<std::string, const Subscription*> by_url;  // the current config subscriptions
  for (const Subscription& c : current) {
    if (c.source == Source::kConfig) by_url[c.url] = &c;
  }
  std::set<std::string> wanted_urls;
  for (const Subscription& w : wanted) {
    if (!wanted_urls.insert(w.url).second) {
      return Error::InvalidInput("store: two config subscriptions share a URL");
    }
    const auto existing = by_url.find(w.url);
    if (existing == by_url.end()) {
      plan.add.push_back(&w);
    } else if (SameFields(*existing->second, w)) {
      ++plan.unchanged;
    } else {
      plan.update.emplace_back(existing->second->id, &w);
    }
  }
  for (const auto& [url, c] : by_url) {
    if (!wanted_urls.count(url)) plan.remove.push_back(c->id);
  }
  return plan;
}

}  // namespace

Result<SubscriptionSync> OutboxStore::SyncConfigSubscriptions(
    const std::vector<Subscription>& wanted, int64_t now) {
  SubscriptionSync sync;
  HW_TRY(db_.Atomically([&]() -> Status {
    Result<std::vector<Subscription>> current = ListSubscriptions();
    if (!current.ok()) return current.error();
    Result<ConfigSyncPlan> plan = PlanConfigSync(*current, wanted);
    if (!plan.ok()) return plan.error();
    for (int64_t id : plan->remove) {
      if (Result<bool> r = DeleteSubscription(id, now); !r.ok()) return r.error();
    }
    for (const Subscription* w : plan->add) {
      Subscription add = *w;
      add.source = Source::kConfig;
      add.created_at = now;
      add.disabled_at.reset();
      add.disabled_reason.clear();
      if (Result<int64_t> id = AddSubscription(add); !id.ok()) return id.error();
    }
    for (const auto& [id, w] : plan->update) {
      HW_PREPARE(q,
                 "UPDATE subscriptions SET secret = ?2, repos = ?3, kinds = ?4, min_impact = ?5, "
                 "backfill = ?7, disabled_at = NULL, disabled_reason = '', updated_at = ?6 "
                 "WHERE id = ?1");
      HW_TRY(q.Bind(1, id)
                 .Bind(2, w->secret)
                 .Bind(3, w->repos)
                 .Bind(4, DumpJson(nlohmann::json(w->kinds)))
                 .Bind(5, diff::ImpactName(w->min_impact))
                 .Bind(6, now)
                 .Bind(7, int64_t{w->backfill})
                 .Run("updating a config subscription"));
    }
    sync = {.added = static_cast<int>(plan->add.size()),
            .updated = static_cast<int>(plan->update.size()),
            .removed = static_cast<int>(plan->remove.size()),
            .unchanged = plan->unchanged};
    return Status::Ok();
  }));
  return sync;
}

Result<std::vector<OutboxRow>> OutboxStore::ListDeliveries(int64_t subscription_id) {
  HW_PREPARE(q,
             "SELECT id, advisory_id, target, state, attempts, next_attempt_at, last_error, "
             "last_status, last_attempt_at, delivered_at, created_at FROM outbox "
             "WHERE subscription_id = ?1 ORDER BY id");
  q.Bind(1, subscription_id);
  std::vector<OutboxRow> out;
  for (;;) {
    Result<bool> row = q.Step("listing deliveries");
    if (!row.ok()) return row.error();
    if (!*row) break;
    OutboxRow r;
    r.id = q.Int(0);
    r.advisory_id = q.Text(1);
    r.target = q.Text(2);
    const std::optional<DeliveryState> state = ParseDeliveryState(q.Text(3));
    if (!state) {
      return Error::Io("store: the state of outbox row " + std::to_string(r.id) + " is damaged");
    }
    r.state = *state;
    r.attempts = q.Int(4);
    r.next_attempt_at = q.Int(5);
    r.last_error = q.Text(6);
    if (!q.IsNull(7)) r.last_status = q.Int(7);
    if (!q.IsNull(8)) r.last_attempt_at = q.Int(8);
    if (!q.IsNull(9)) r.delivered_at = q.Int(9);
    r.created_at = q.Int(10);
    out.push_back(std::move(r));
  }
  return out;
}

Result<int64_t> OutboxStore::CountPendingDeliveries() {
  HW_PREPARE(q,
             "SELECT COUNT(*) FROM outbox o "
             "JOIN subscriptions s ON s.id = o.subscription_id AND s.disabled_at IS NULL "
             "WHERE o.state = 'pending'");
  Result<bool> row = q.Step("counting pending deliveries");
  if (!row.ok()) return row.error();
  return *row ? q.Int(0) : int64_t{0};
}

Result<std::map<int64_t, DeliveryTally>> OutboxStore::TallyDeliveries() {
  HW_PREPARE(q,
             "SELECT subscription_id, state, COUNT(*) FROM outbox "
             "WHERE subscription_id IS NOT NULL GROUP BY subscription_id, state");
  std::map<int64_t, DeliveryTally> out;
  for (;;) {
    Result<bool> row = q.Step("counting deliveries");
    if (!row.ok()) return row.error();
    if (!*row) break;
    DeliveryTally& t = out[q.Int(0)];
    const std::optional<DeliveryState> state = ParseDeliveryState(q.Text(1));
    if (!state) return Error::Io("store: an outbox row's state is damaged");
    (state == DeliveryState::kPending     ? t.pending
     : state == DeliveryState::kDelivered ? t.delivered
                                          : t.failed) = q.Int(2);
  }
  return out;
}

}  // namespace hubwatch::store
