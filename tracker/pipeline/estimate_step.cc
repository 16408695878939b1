#include "tracker/pipeline/estimate_step.h"

#include <set>

#include "estimator/base/json_nesting.h"
#include "estimator/estimate.h"
#include "estimator/format.h"
#include "estimator/report.h"
#include "tracker/diff/tracked_files.h"

namespace hubwatch::pipeline {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// An unavailable estimate's reason: one line, as long as a reason needs.
constexpr size_t kMaxReasonBytes = 1024;

// Stored JSON is read without trusting its shape: a missing or mistyped member is null.
const nlohmann::json& Member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}
const nlohmann::json& Items(const nlohmann::json& j) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  return j.is_array() ? j : kEmpty;
}
double NumberOr0(const nlohmann::json& j) { return j.is_number() ? j.get<double>() : 0; }
std::string StringOr(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : ""; }

std::set<std::string> HeaderIds(const Snapshot& s) {
  std::set<std::string> ids;
  for (const diff::ManifestEntry* e : CheckpointFiles(s)) ids.insert(e->content_id());
  return ids;
}

}  // namespace

std::vector<const diff::ManifestEntry*> CheckpointFiles(const Snapshot& snapshot) {
  std::vector<const diff::ManifestEntry*> out;
  std::set<std::string> indexed;
  std::optional<std::string> index = snapshot.File("model.safetensors.index.json");
  if (index && !JsonNestsDeeperThan(*index)) {
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

Result<EstimateBasis> BasisOf(const Snapshot& snapshot, EstimateInput input) {
  input.headers.clear();
  for (const diff::ManifestEntry* e : CheckpointFiles(snapshot)) {
    auto it = snapshot.headers.find(e->content_id());
    if (it == snapshot.headers.end()) {
      input.headers.clear();  // estimate without the comparison rather than not at all
      break;
    }
    input.headers.push_back(it->second);
  }
  // Without config.json, the checkpoint's tensors alone still give counts and memory.
  const std::optional<std::string> config = snapshot.File("config.json");
  if (!config && input.headers.empty()) {
    return Error::Unsupported("no readable config.json and no safetensors headers");
  }
  Result<EstimateBasis> b = PrepareEstimateFromText(config.value_or("{}"), input);
  // A config.json the estimator refuses (broken JSON, absurd sizes) does not hide a checkpoint
  // it can read: the tensors alone give the counts, and the refusal is said beside them.
  if (!b.ok() && config && !input.headers.empty() && b.error().code != ErrorCode::kOverflow) {
    std::string refused = b.error().message;
    if (refused.starts_with("config.json: ")) refused.erase(0, 13);
    refused = Clip(refused, kMaxReasonBytes);
    b = PrepareEstimateFromText("{}", input);
    if (b.ok()) {
      b->graph.notes.insert(b->graph.notes.begin(),
                            "config.json was refused (" + refused +
                                "): estimated from the checkpoint's tensors alone");
    }
  }
  return b;
}

Result<Estimate> EstimateOf(const Snapshot& snapshot, EstimateInput input) {
  Result<EstimateBasis> basis = BasisOf(snapshot, input);
  if (!basis.ok()) return basis.error();
  return FinishEstimate(*basis, input);
}

EstimateOutcome EstimateSnapshot(const std::string& repo, const Snapshot& snapshot,
                                 size_t max_estimate_bytes) {
  EstimateOutcome out;
  auto unavailable = [&](std::string reason) {
    out.skipped_because = Clip(reason, kMaxReasonBytes);
    out.record = store::EstimateRecord::Unavailable(repo, snapshot.sha, out.skipped_because);
    return out;
  };
  Result<Estimate> e = EstimateOf(snapshot);
  if (!e.ok() && !snapshot.File("config.json")) {
    out.skipped_because = e.error().message;  // nothing to estimate: no row
    return out;
  }
  if (!e.ok()) return unavailable(e.error().message);
  nlohmann::json estimate = EstimateToJson(*e);
  const size_t bytes =
      estimate.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
  if (bytes > max_estimate_bytes) {
    return unavailable("the estimate is " + std::to_string(bytes) + " bytes of JSON, over the " +
                       std::to_string(max_estimate_bytes) + " the store keeps");
  }
  store::EstimateRecord r;
  r.repo = repo;
  r.sha = snapshot.sha;
  r.estimate = std::move(estimate);
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
    k[std::string("params.") + p] = Member(Member(e, "params"), p);
  }
  k["kv_cache.bytes_per_token"] = Member(Member(e, "kv_cache"), "bytes_per_token");
  if (Member(e, "checkpoint").is_object()) {
    k["checkpoint.parameter_delta"] = Member(Member(e, "checkpoint"), "parameter_delta");
  }
  for (const nlohmann::json& plan : Items(Member(e, "memory"))) {
    // Rounded to MB so float noise is not a change.
    const double fixed = NumberOr0(Member(plan, "fixed_bytes"));
    const double per = NumberOr0(Member(plan, "per_sample_bytes"));
    k["memory." + StringOr(Member(plan, "mode")) + ".batch1_mb"] =
        static_cast<int64_t>((fixed + per) / 1e6 + 0.5);
  }
  for (const nlohmann::json& card : Items(Member(e, "fit"))) {
    const nlohmann::json& modes = Member(card, "modes");
    if (!modes.is_object()) continue;
    for (const auto& [mode, fit] : modes.items()) {
      const std::string key = "fit." + StringOr(Member(card, "card")) + "." + mode;
      k[key + ".verdict"] = Member(fit, "verdict");
      k[key + ".max_batch"] = Member(fit, "max_batch");
    }
  }
  return k;
}

std::optional<diff::Change> EstimateChange(const nlohmann::json& previous,
                                           const nlohmann::json& current) {
  if (Member(previous, "schema") != kEstimateSchemaId ||
      Member(current, "schema") != kEstimateSchemaId) {
    return std::nullopt;
  }
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
