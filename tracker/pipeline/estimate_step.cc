#include "tracker/pipeline/estimate_step.h"

#include <set>

#include "estimator/estimate.h"
#include "estimator/report.h"
#include "tracker/diff/tracked_files.h"

namespace hubwatch::pipeline {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::set<std::string> HeaderIds(const Snapshot& s) {
  std::set<std::string> ids;
  for (const diff::ManifestEntry* e : CheckpointFiles(s)) ids.insert(e->content_id());
  return ids;
}

}  // namespace

std::vector<const diff::ManifestEntry*> CheckpointFiles(const Snapshot& snapshot) {
  std::vector<const diff::ManifestEntry*> out;
  std::set<std::string> indexed;
  if (std::optional<std::string> index = snapshot.File("model.safetensors.index.json")) {
    nlohmann::json j = nlohmann::json::parse(*index, nullptr, false);
    if (j.is_object() && j.contains("weight_map") && j["weight_map"].is_object()) {
      for (const auto& [tensor, file] : j["weight_map"].items()) {
        if (file.is_string()) indexed.insert(file.get<std::string>());
      }
    }
  }
  bool has_single = false;
  for (const diff::ManifestEntry& e : snapshot.manifest)
    has_single |= e.path == "model.safetensors";
  for (const diff::ManifestEntry& e : snapshot.manifest) {
    if (!EndsWith(e.path, ".safetensors") || e.path.find('/') != std::string::npos) continue;
    if (!indexed.empty() ? indexed.count(e.path) != 0
                         : (!has_single || e.path == "model.safetensors")) {
      out.push_back(&e);
    }
  }
  return out;
}

bool NeedsEstimate(const Snapshot* before, const Snapshot& after, bool has_previous_estimate) {
  if (!has_previous_estimate || !before) return true;
  return before->File("config.json") != after.File("config.json") ||
         HeaderIds(*before) != HeaderIds(after);
}

EstimateOutcome EstimateSnapshot(const std::string& repo, const Snapshot& snapshot) {
  EstimateOutcome out;
  std::optional<std::string> config = snapshot.File("config.json");
  if (!config) {
    out.skipped_because = "no readable config.json";
    return out;
  }
  EstimateInput input;
  for (const diff::ManifestEntry* e : CheckpointFiles(snapshot)) {
    auto it = snapshot.headers.find(e->content_id());
    if (it == snapshot.headers.end()) {
      out.skipped_because.clear();  // estimate without the comparison rather than not at all
      input.headers.clear();
      break;
    }
    input.headers.push_back(it->second);
  }
  Result<Estimate> e = EstimateModelFromText(*config, input);
  if (!e.ok()) {
    out.skipped_because = e.error().message;
    return out;
  }
  store::EstimateRecord r;
  r.repo = repo;
  r.sha = snapshot.sha;
  r.estimate = EstimateToJson(*e);
  r.params_total = e->params.total;
  r.params_active = e->params.active;
  r.kv_bytes_per_token = e->kv.bytes_per_token;
  if (e->checkpoint) r.parameter_delta = e->checkpoint->parameter_delta;
  out.record = std::move(r);
  return out;
}

nlohmann::json KeyFigures(const nlohmann::json& e) {
  nlohmann::json k = nlohmann::json::object();
  if (!e.is_object()) return k;
  for (const char* p : {"total", "on_disk", "active"}) {
    k[std::string("params.") + p] = e["params"].value(p, nlohmann::json());
  }
  k["kv_cache.bytes_per_token"] = e["kv_cache"].value("bytes_per_token", nlohmann::json());
  if (e.contains("checkpoint") && e["checkpoint"].is_object()) {
    k["checkpoint.parameter_delta"] = e["checkpoint"]["parameter_delta"];
  }
  for (const nlohmann::json& plan : e.value("memory", nlohmann::json::array())) {
    // Rounded to MB so float noise is not a change.
    const double fixed = plan.value("fixed_bytes", 0.0), per = plan.value("per_sample_bytes", 0.0);
    k["memory." + plan.value("mode", std::string()) + ".batch1_mb"] =
        static_cast<int64_t>((fixed + per) / 1e6 + 0.5);
  }
  for (const nlohmann::json& card : e.value("fit", nlohmann::json::array())) {
    for (const auto& [mode, fit] : card["modes"].items()) {
      const std::string key = "fit." + card.value("card", std::string()) + "." + mode;
      k[key + ".verdict"] = fit["verdict"];
      k[key + ".max_batch"] = fit["max_batch"];
    }
  }
  return k;
}

std::optional<diff::Change> EstimateChange(const nlohmann::json& previous,
                                           const nlohmann::json& current) {
  const nlohmann::json a = KeyFigures(previous), b = KeyFigures(current);
  nlohmann::json moved = nlohmann::json::object();
  bool memory_or_fit = false;
  std::vector<std::string> parts;
  for (const auto& [key, value] : b.items()) {
    const nlohmann::json old = a.value(key, nlohmann::json());
    if (old == value) continue;
    moved[key] = {{"old", old}, {"new", value}};
    memory_or_fit |= key.rfind("memory.", 0) == 0 || key.rfind("fit.", 0) == 0;
    if (key.rfind("fit.", 0) != 0 && parts.size() < 3) {
      parts.push_back(key + " " + old.dump() + " -> " + value.dump());
    }
  }
  if (moved.empty()) return std::nullopt;
  diff::Change c;
  c.kind = diff::ChangeKind::kEstimate;
  c.impact = memory_or_fit ? diff::Impact::kBehavioral : diff::Impact::kCosmetic;
  std::string summary = "estimate moved: ";
  for (size_t i = 0; i < parts.size(); ++i) summary += (i ? "; " : "") + parts[i];
  if (parts.empty()) summary += "fit per card changed";
  c.summary = summary;
  c.details = {{"figures", std::move(moved)}};
  return c;
}

}  // namespace hubwatch::pipeline
