// The "repos" entries of the configuration file.

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/config/config.h"
#include "daemon/config/config_json.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::config {

using field::Bad;
using field::CheckKeys;
using field::Describe;
using field::PositiveInt;
using field::String;

namespace {

Result<DerivativesConfig> ParseDerivatives(const nlohmann::json& v, const std::string& where) {
  DerivativesConfig d;
  if (v.is_boolean()) {
    d.enabled = v.get<bool>();
    return d;
  }
  if (!v.is_object()) {
    return Bad(where + " must be true, false or {\"max\": N, \"relations\": [...]}, got " +
               Describe(v));
  }
  if (Status s = CheckKeys(v, where, {"max", "relations"}); !s.ok()) return s.error();
  d.enabled = true;
  if (v.contains("max")) {
    Result<int64_t> max = PositiveInt(v["max"], where + ".max", 1000);
    if (!max.ok()) return max.error();
    d.max = *max;
  }
  if (v.contains("relations")) {
    const nlohmann::json& list = v["relations"];
    if (!list.is_array() || list.empty() || list.size() > 4) {
      return Bad(where + ".relations must be a list of finetune, adapter, quantized, merge");
    }
    d.relations.clear();
    for (const nlohmann::json& item : list) {
      std::optional<derivatives::Relation> relation =
          item.is_string() ? derivatives::ParseRelation(item.get<std::string>()) : std::nullopt;
      if (!relation) {
        return Bad(where + ".relations[]: expected finetune, adapter, quantized or merge, got " +
                   Describe(item));
      }
      if (std::find(d.relations.begin(), d.relations.end(), *relation) == d.relations.end()) {
        d.relations.push_back(*relation);
      }
    }
  }
  return d;
}

}  // namespace

Result<RepoConfig> ParseRepoEntry(const nlohmann::json& r, const std::string& where) {
  if (!r.is_object()) return Bad(where + " must be an object");
  if (Status s = CheckKeys(r, where, {"id", "refs", "pins", "derivatives"}); !s.ok()) {
    return s.error();
  }
  RepoConfig repo;
  Result<std::string> id = String(r.value("id", nlohmann::json()), where + ".id");
  if (!id.ok()) return id.error();
  if (Status v = hub::ValidateRepoId(*id); !v.ok()) {
    return Bad(where + ".id: " + v.error().message);
  }
  repo.id = *id;
  if (r.contains("refs")) {
    Result<std::vector<std::string>> refs = field::RefList(r["refs"], where + ".refs");
    if (!refs.ok()) return refs.error();
    repo.refs = std::move(refs).value();
  }
  if (r.contains("pins")) {
    if (!r["pins"].is_array() || r["pins"].size() > hub::kMaxPins) {
      return Bad(where + ".pins must be an array of at most " + std::to_string(hub::kMaxPins) +
                 " revisions (7-40 hex digits each)");
    }
    for (const nlohmann::json& pin : r["pins"]) {
      Result<std::string> sha = String(pin, where + ".pins[]");
      if (!sha.ok()) return sha.error();
      if (Status v = hub::ValidatePin(*sha); !v.ok()) {
        return Bad(where + ".pins[]: " + v.error().message);
      }
      repo.pins.push_back(*sha);
    }
  }
  if (r.contains("derivatives")) {
    Result<DerivativesConfig> d = ParseDerivatives(r["derivatives"], where + ".derivatives");
    if (!d.ok()) return d.error();
    repo.derivatives = *d;
  }
  return repo;
}

}  // namespace hubwatch::config
