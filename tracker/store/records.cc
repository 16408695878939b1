#include "tracker/store/records.h"

namespace hubwatch::store {
namespace {

constexpr std::string_view kStateNames[] = {"ok",      "gated",    "renamed",
                                            "deleted", "disabled", "erroring"};

}  // namespace

std::string_view RepoStateName(RepoState s) { return kStateNames[static_cast<int>(s)]; }

bool ParseRepoState(std::string_view name, RepoState& state) {
  for (size_t i = 0; i < std::size(kStateNames); ++i) {
    if (kStateNames[i] == name) {
      state = static_cast<RepoState>(i);
      return true;
    }
  }
  return false;
}

EstimateRecord EstimateRecord::Unavailable(std::string repo, std::string sha, std::string reason) {
  EstimateRecord r;
  r.repo = std::move(repo);
  r.sha = std::move(sha);
  r.estimate = {{"schema", kUnavailableEstimateSchema}, {"unavailable", std::move(reason)}};
  return r;
}

std::optional<std::string> EstimateRecord::UnavailableReason() const {
  if (!estimate.is_object() ||
      estimate.value("schema", nlohmann::json()) != nlohmann::json(kUnavailableEstimateSchema)) {
    return std::nullopt;
  }
  const nlohmann::json reason = estimate.value("unavailable", nlohmann::json());
  return reason.is_string() ? reason.get<std::string>() : "(no reason recorded)";
}

}  // namespace hubwatch::store
