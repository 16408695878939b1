#include "tracker/store/records.h"

namespace hubwatch::store {
namespace {

constexpr std::string_view kStateNames[] = {"ok",      "gated",    "renamed",
                                            "deleted", "disabled", "erroring"};

constexpr std::string_view kSourceNames[] = {"config", "api"};
constexpr std::string_view kDeliveryStateNames[] = {"pending", "delivered", "failed"};
constexpr std::string_view kPollTriggerNames[] = {"poll", "reconcile", "listing", "webhook"};

// The enumerator whose name is `name` among `names`, listed in enumerator order.
template <class Enum, size_t N>
std::optional<Enum> ParseName(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view SourceName(Source s) { return kSourceNames[static_cast<int>(s)]; }
std::optional<Source> ParseSource(std::string_view name) {
  return ParseName<Source>(kSourceNames, name);
}

std::string_view PollTriggerName(PollTrigger t) { return kPollTriggerNames[static_cast<int>(t)]; }
std::optional<PollTrigger> ParsePollTrigger(std::string_view name) {
  return ParseName<PollTrigger>(kPollTriggerNames, name);
}

std::string_view DeliveryStateName(DeliveryState s) {
  return kDeliveryStateNames[static_cast<int>(s)];
}
std::optional<DeliveryState> ParseDeliveryState(std::string_view name) {
  return ParseName<DeliveryState>(kDeliveryStateNames, name);
}

std::string_view RepoStateName(RepoState s) { return kStateNames[static_cast<int>(s)]; }

bool ParseRepoState(std::string_view name, RepoState& state) {
  const std::optional<RepoState> parsed = ParseName<RepoState>(kStateNames, name);
  if (parsed) state = *parsed;
  return parsed.has_value();
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
