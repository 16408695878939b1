#include "daemon/api/derivatives_json.h"

#include <map>

#include "tracker/advisory/time_text.h"

namespace hubwatch::api {

namespace {

nlohmann::json DateOrNull(const std::string& date) {
  return date.empty() ? nlohmann::json() : nlohmann::json(date);
}

// The worst of `lags`: lagging, then diverged, then fixed; not_applicable when none is.
derivatives::LagStatus Worst(const std::vector<derivatives::AdvisoryLag>& lags) {
  using derivatives::LagStatus;
  auto rank = [](LagStatus s) {
    return s == LagStatus::kLagging    ? 3
           : s == LagStatus::kDiverged ? 2
           : s == LagStatus::kFixed    ? 1
                                       : 0;
  };
  LagStatus worst = LagStatus::kNotApplicable;
  for (const derivatives::AdvisoryLag& lag : lags) {
    if (rank(lag.status) > rank(worst)) worst = lag.status;
  }
  return worst;
}

}  // namespace

nlohmann::json LagCountsJson(const derivatives::LagCounts& c) {
  return {{"fixed", c.fixed},
          {"lagging", c.lagging},
          {"diverged", c.diverged},
          {"not_applicable", c.not_applicable},
          {"unchecked", c.unchecked}};
}

nlohmann::json DerivativeTallyJson(const store::DerivativeTally& t) {
  return {{"derivatives", t.derivatives}, {"checked", t.checked},
          {"lagging", t.lagging},         {"fixed", t.fixed},
          {"diverged", t.diverged},       {"not_applicable", t.not_applicable},
          {"unchecked", t.unchecked}};
}

nlohmann::json DerivativeJson(const derivatives::DerivativeRecord& d) {
  nlohmann::json advisories = nlohmann::json::array();
  for (const derivatives::AdvisoryLag& lag : d.lags) {
    const std::string_view status = derivatives::LagStatusName(lag.status);
    nlohmann::json a = {{"id", lag.advisory_id},
                        {"status", d.current ? status : std::string_view("unchecked")}};
    if (!d.current) a["last_status"] = status;
    if (!lag.derivative_advisory_id.empty()) a["derivative_advisory"] = lag.derivative_advisory_id;
    advisories.push_back(std::move(a));
  }
  nlohmann::json j = {
      {"id", d.id},
      {"relation", derivatives::RelationName(d.relation)},
      {"head", d.head},
      {"checked_at",
       d.checked_at > 0 ? nlohmann::json(advisory::Rfc3339(d.checked_at)) : nlohmann::json()},
  };
  if (!d.error.empty()) j["error"] = d.error;
  j["status"] = d.current ? derivatives::LagStatusName(Worst(d.lags)) : "unchecked";
  j["downloads"] = d.signals.downloads;
  j["likes"] = d.signals.likes;
  j["created_at"] = DateOrNull(d.signals.created_at);
  j["advisories"] = std::move(advisories);
  return j;
}

nlohmann::json EvictionJson(const derivatives::Eviction& e) {
  return {{"id", e.id},
          {"relation", derivatives::RelationName(e.relation)},
          {"reason", derivatives::EvictionReasonName(e.reason)},
          {"detail", e.detail},
          {"evicted_at", advisory::Rfc3339(e.evicted_at)},
          {"downloads", e.signals.downloads},
          {"likes", e.signals.likes},
          {"created_at", DateOrNull(e.signals.created_at)}};
}

nlohmann::json DerivativesJson(const std::string& repo,
                               const std::vector<derivatives::DerivativeRecord>& list,
                               const store::DerivativeTally& tally,
                               const std::vector<derivatives::Eviction>& evicted) {
  nlohmann::json derivatives = nlohmann::json::array();
  for (const derivatives::DerivativeRecord& d : list) derivatives.push_back(DerivativeJson(d));
  nlohmann::json evictions = nlohmann::json::array();
  for (const derivatives::Eviction& e : evicted) evictions.push_back(EvictionJson(e));
  return {{"repo", repo},
          {"derivatives", std::move(derivatives)},
          {"counts", DerivativeTallyJson(tally)},
          {"evicted", std::move(evictions)}};
}

Status WithDerivativeCounts(store::Store& reads, std::vector<store::AdvisoryRecord>& advisories) {
  std::map<std::string, std::map<std::string, derivatives::LagCounts>> by_repo;
  for (store::AdvisoryRecord& a : advisories) {
    auto repo = by_repo.find(a.repo);
    if (repo == by_repo.end()) {
      Result<std::map<std::string, derivatives::LagCounts>> counts =
          reads.derivatives().CountsByAdvisory(a.repo);
      if (!counts.ok()) return counts.error();
      repo = by_repo.emplace(a.repo, std::move(counts).value()).first;
    }
    const auto counts = repo->second.find(a.id);
    if (counts == repo->second.end() || !a.osv.is_object()) continue;
    nlohmann::json& specific = a.osv["database_specific"];
    if (specific.is_null()) specific = nlohmann::json::object();
    if (specific.is_object()) specific["derivatives"] = LagCountsJson(counts->second);
  }
  return Status::Ok();
}

}  // namespace hubwatch::api
