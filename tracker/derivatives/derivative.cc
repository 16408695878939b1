#include "tracker/derivatives/derivative.h"

#include <array>
#include <utility>

namespace hubwatch::derivatives {
namespace {

constexpr std::array<std::pair<Relation, std::string_view>, 4> kRelations{{
    {Relation::kFinetune, "finetune"},
    {Relation::kAdapter, "adapter"},
    {Relation::kQuantized, "quantized"},
    {Relation::kMerge, "merge"},
}};
constexpr std::array<std::pair<LagStatus, std::string_view>, 4> kStatuses{{
    {LagStatus::kFixed, "fixed"},
    {LagStatus::kLagging, "lagging"},
    {LagStatus::kDiverged, "diverged"},
    {LagStatus::kNotApplicable, "not_applicable"},
}};
constexpr std::array<std::pair<EvictionReason, std::string_view>, 4> kEvictionReasons{{
    {EvictionReason::kRankedOut, "ranked_out"},
    {EvictionReason::kUnlisted, "unlisted"},
    {EvictionReason::kNotFound, "not_found"},
    {EvictionReason::kUntagged, "untagged"},
}};

template <class E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

template <class E, size_t N>
std::optional<E> Parse(const std::array<std::pair<E, std::string_view>, N>& table,
                       std::string_view name) {
  for (const auto& [e, n] : table) {
    if (n == name) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view RelationName(Relation relation) { return NameOf(kRelations, relation); }
std::optional<Relation> ParseRelation(std::string_view name) { return Parse(kRelations, name); }
std::string_view LagStatusName(LagStatus status) { return NameOf(kStatuses, status); }
std::optional<LagStatus> ParseLagStatus(std::string_view name) { return Parse(kStatuses, name); }
std::string_view EvictionReasonName(EvictionReason reason) {
  return NameOf(kEvictionReasons, reason);
}
std::optional<EvictionReason> ParseEvictionReason(std::string_view name) {
  return Parse(kEvictionReasons, name);
}

}  // namespace hubwatch::derivatives
