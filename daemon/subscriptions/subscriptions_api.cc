#include "daemon/subscriptions/subscriptions_api.h"

#include <charconv>
#include <chrono>
#include <map>
#include <memory>

#include "daemon/subscriptions/signature.h"
#include "daemon/subscriptions/target_policy.h"
#include "tracker/advisory/osv.h"

namespace hubwatch::subscriptions {
namespace {

using api::HttpReply;

nlohmann::json ToJson(const store::Subscription& s) {
  return {{"id", s.id},
          {"url", s.url},
          {"repos", s.repos},
          {"kinds", s.kinds},
          {"min_impact", diff::ImpactName(s.min_impact)},
          {"backfill", s.backfill},
          {"source", store::SourceName(s.source)},
          {"disabled", s.disabled_at.has_value()},
          {"disabled_reason", s.disabled_reason},
          {"disabled_at",
           s.disabled_at ? nlohmann::json(advisory::Rfc3339(*s.disabled_at)) : nlohmann::json()},
          {"created_at", advisory::Rfc3339(s.created_at)}};
}

// The subscription a POST body describes, or a 400 reply.
Result<store::Subscription> FromBody(const nlohmann::json& body, bool allow_private) {
  if (!body.is_object()) return Error::InvalidInput("the body must be a JSON object");
  for (auto it = body.begin(); it != body.end(); ++it) {
    const std::string& k = it.key();
    if (k != "url" && k != "repos" && k != "kinds" && k != "min_impact" && k != "secret" &&
        k != "backfill") {
      return Error::InvalidInput("unknown key \"" + k + "\"");
    }
  }
  store::Subscription s;
  if (!body.contains("url") || !body["url"].is_string()) {
    return Error::InvalidInput("url must be a string");
  }
  s.url = body["url"].get<std::string>();
  if (Status ok = CheckTargetUrl(s.url, allow_private); !ok.ok()) return ok.error();
  if (body.contains("repos")) {
    if (!body["repos"].is_string()) return Error::InvalidInput("repos must be a string");
    s.repos = body["repos"].get<std::string>();
  }
  if (body.contains("kinds")) {
    if (!body["kinds"].is_array()) return Error::InvalidInput("kinds must be an array");
    for (const nlohmann::json& k : body["kinds"]) {
      if (!k.is_string()) return Error::InvalidInput("kinds must be an array of strings");
      s.kinds.push_back(k.get<std::string>());
    }
  }
  std::string min_impact(diff::ImpactName(s.min_impact));
  if (body.contains("min_impact")) {
    if (!body["min_impact"].is_string()) return Error::InvalidInput("min_impact must be a string");
    min_impact = body["min_impact"].get<std::string>();
  }
  if (Status ok = CheckFilters(s.repos, s.kinds, min_impact); !ok.ok()) return ok.error();
  s.min_impact = *diff::ParseImpact(min_impact);  // CheckFilters accepted it
  if (body.contains("backfill")) {
    if (!body["backfill"].is_boolean()) {
      return Error::InvalidInput("backfill must be true or false");
    }
    s.backfill = body["backfill"].get<bool>();
  }
  if (body.contains("secret")) {
    if (!body["secret"].is_string()) return Error::InvalidInput("secret must be a string");
    s.secret = body["secret"].get<std::string>();
    if (Result<std::string> key = ParseSecret(s.secret); !key.ok()) return key.error();
  } else {
    Result<std::string> secret = GenerateSecret();
    if (!secret.ok()) return secret.error();
    s.secret = std::move(*secret);
  }
  s.source = store::Source::kApi;
  return s;
}

}  // namespace

SubscriptionsApi::SubscriptionsApi(service::StoreAccess& store, SubscriptionMatcher& matcher,
                                   bool allow_private_targets, const Clock& clock)
    : store_(store), matcher_(matcher), allow_private_(allow_private_targets), clock_(clock) {}

void SubscriptionsApi::Create(const nlohmann::json& body, Done done) {
  Result<store::Subscription> parsed = FromBody(body, allow_private_);
  if (!parsed.ok()) return done(HttpReply::Error(400, parsed.error().message));
  store::Subscription s = std::move(*parsed);
  s.created_at = clock_.UnixSeconds();
  auto created = std::make_shared<store::Subscription>(s);
  auto conflict = std::make_shared<bool>(false);
  store_.Write(
      [created, conflict](store::Store& w) -> Status {
        Result<std::vector<store::Subscription>> all = w.outbox().ListSubscriptions();
        if (!all.ok()) return all.error();
        for (const store::Subscription& other : *all) {
          if (other.source == store::Source::kConfig && other.url == created->url) {
            *conflict = true;
            return Status::Ok();
          }
        }
        Result<int64_t> id = w.outbox().AddSubscription(*created);
        if (!id.ok()) return id.error();
        created->id = *id;
        return Status::Ok();
      },
      [this, alive = std::weak_ptr<bool>(alive_), created, conflict,
       done = std::move(done)](Status st) {
        if (alive.expired()) return;
        if (!st.ok()) return done(HttpReply::Error(500, st.error().message));
        if (*conflict) {
          return done(HttpReply::Error(409, "a subscription from the config file has this URL"));
        }
        Changed();
        nlohmann::json reply = ToJson(*created);
        reply["secret"] = created->secret;
        done(HttpReply::Json(201, reply));
      });
}

void SubscriptionsApi::List(Done done) {
  store::Store& reads = store_.reads();
  Result<std::vector<store::Subscription>> all = reads.outbox().ListSubscriptions();
  if (!all.ok()) return done(HttpReply::Error(500, all.error().message));
  Result<std::map<int64_t, store::DeliveryTally>> tally = reads.outbox().TallyDeliveries();
  if (!tally.ok()) return done(HttpReply::Error(500, tally.error().message));
  nlohmann::json list = nlohmann::json::array();
  for (const store::Subscription& s : *all) {
    nlohmann::json j = ToJson(s);
    const auto it = tally->find(s.id);
    const store::DeliveryTally t = it == tally->end() ? store::DeliveryTally{} : it->second;
    j["pending"] = t.pending;
    j["delivered"] = t.delivered;
    j["failed"] = t.failed;
    list.push_back(std::move(j));
  }
  done(HttpReply::Json(200, {{"subscriptions", std::move(list)}}));
}

void SubscriptionsApi::Remove(const std::string& id_text, Done done) {
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc() || end != id_text.data() + id_text.size() || id <= 0) {
    return done(HttpReply::Error(404, "no such subscription"));
  }
  enum class Found { kNo, kConfig, kRemoved };
  auto found = std::make_shared<Found>(Found::kNo);
  const int64_t now = clock_.UnixSeconds();
  store_.Write(
      [id, now, found](store::Store& w) -> Status {
        Result<std::optional<store::Subscription>> s = w.outbox().GetSubscription(id);
        if (!s.ok()) return s.error();
        if (!s->has_value()) return Status::Ok();
        if ((*s)->source == store::Source::kConfig) {
          *found = Found::kConfig;
          return Status::Ok();
        }
        Result<bool> r = w.outbox().RemoveSubscription(id, now);
        if (!r.ok()) return r.error();
        if (*r) *found = Found::kRemoved;
        return Status::Ok();
      },
      [this, alive = std::weak_ptr<bool>(alive_), found, done = std::move(done)](Status st) {
        if (alive.expired()) return;
        if (!st.ok()) return done(HttpReply::Error(500, st.error().message));
        if (*found == Found::kNo) return done(HttpReply::Error(404, "no such subscription"));
        if (*found == Found::kConfig) {
          return done(
              HttpReply::Error(409, "this subscription comes from the config file; edit the file"));
        }
        Changed();
        HttpReply reply;
        reply.status = 204;
        done(std::move(reply));
      });
}

void SubscriptionsApi::Changed() {
  (void)matcher_.Refresh(store_.reads());
  if (on_change) on_change();
}

}  // namespace hubwatch::subscriptions
