#include "tracker/pipeline/derivative_round.h"

#include <algorithm>
#include <utility>

namespace hubwatch::pipeline {
namespace {

using derivatives::AdvisoryLag;
using derivatives::DerivativeCheck;
using derivatives::DerivativeRecord;
using derivatives::LagStatus;

// Evictions one log line names (the rest are counted; the API lists them).
constexpr size_t kEvictionsNamed = 5;

bool SameStatuses(const std::vector<AdvisoryLag>& a, const std::vector<AdvisoryLag>& b) {
  std::map<std::string, LagStatus> left, right;
  for (const AdvisoryLag& lag : a) left[lag.advisory_id] = lag.status;
  for (const AdvisoryLag& lag : b) right[lag.advisory_id] = lag.status;
  return left == right;
}

bool AnyLagging(const std::vector<AdvisoryLag>& lags) {
  return std::any_of(lags.begin(), lags.end(),
                     [](const AdvisoryLag& lag) { return lag.status == LagStatus::kLagging; });
}

std::optional<derivatives::Signals> SeenOf(const DerivativeRound& round, const std::string& id) {
  auto it = round.seen.find(id);
  return it == round.seen.end() ? std::nullopt : std::optional(it->second);
}

// A check of derivative `id` of `upstream` at `head`, made `now`: what it is, where it was.
DerivativeCheck CheckAt(const std::string& upstream, const std::string& id,
                        derivatives::Relation relation, const std::string& head,
                        const std::string& last_modified, int64_t now) {
  DerivativeCheck check;
  check.upstream = upstream;
  check.id = id;
  check.relation = relation;
  check.head = head;
  check.last_modified = last_modified;
  check.checked_at = now;
  return check;
}

// The check of a derivative read at a new head (or whose read failed).
DerivativeCheck CheckOfRead(const std::string& upstream, DerivativeRead& read,
                            const PreparedDerivativeRound& prepared, int64_t now) {
  DerivativeCheck check =
      CheckAt(upstream, read.id, read.relation, read.head, read.last_modified, now);
  check.signals = read.signals;
  if (read.facets) {
    check.facets_json = derivatives::FacetsToJson(*read.facets);
    check.lags = LagsOf(prepared.fixes, *read.facets);
    check.fixes_through = prepared.fixes_through;
  } else {
    check.error = read.error;
  }
  return check;
}

}  // namespace

Result<PreparedDerivativeRound> PrepareDerivativeRound(store::Store& reads,
                                                       const std::string& upstream,
                                                       const DerivativeRoundSettings& settings) {
  PreparedDerivativeRound out;
  // Before the fixes: one published between the two reads is classified, never claimed.
  Result<int64_t> newest = reads.derivatives().NewestFixSeq(upstream);
  if (!newest.ok()) return newest.error();
  out.fixes_through = *newest;
  Result<std::vector<DerivativeRecord>> stored = reads.derivatives().List(upstream);
  if (!stored.ok()) return stored.error();
  Result<std::vector<derivatives::FixFacets>> fixes = LoadFixFacets(reads, upstream);
  if (!fixes.ok()) return fixes.error();
  out.fixes = std::move(fixes).value();
  DerivativeRoundInput& input = out.input;
  input.upstream = upstream;
  input.relations = settings.relations;
  input.max = settings.max;
  input.concurrency = settings.concurrency;
  input.follow_budget = settings.follow_budget;
  for (DerivativeRecord& record : *stored) {
    if (record.checked_at > 0 && record.error.empty() && !record.facets_json.empty()) {
      input.checked_heads[record.id] = record.head;
    }
    input.known[record.id] = {record.relation, record.signals, record.last_modified,
                              record.listed_at};
    out.stored.emplace(record.id, std::move(record));
  }
  return out;
}

ClassifiedDerivativeRound ClassifyDerivativeRound(const PreparedDerivativeRound& prepared,
                                                  DerivativeRound round, int64_t now) {
  const std::string& upstream = prepared.input.upstream;
  ClassifiedDerivativeRound out;
  for (DerivativeRead& read : round.reads) {
    DerivativeCheck check = CheckOfRead(upstream, read, prepared, now);
    if (read.facets) {
      out.lagging += AnyLagging(check.lags);
    } else {
      out.failed.push_back({read.id, read.head, read.error});
    }
    out.checks.push_back(std::move(check));
  }
  for (const std::string& id : round.unchanged) {
    const DerivativeRecord& record = prepared.stored.at(id);
    Result<derivatives::FacetSet> facets = derivatives::FacetsFromJson(record.facets_json);
    std::vector<AdvisoryLag> lags =
        facets.ok() ? LagsOf(prepared.fixes, *facets) : record.lags;  // unreadable: as stored
    // Only classified facets cover the fixes; stored lags kept as they were cover what they did.
    const std::optional<int64_t> through =
        facets.ok() ? std::optional(prepared.fixes_through) : std::nullopt;
    out.lagging += AnyLagging(lags);
    if (SameStatuses(lags, record.lags)) {
      out.sightings.push_back({id, SeenOf(round, id), through});
      continue;
    }
    // Nothing was read: the stored facets, classified again, at the stored head.
    DerivativeCheck check =
        CheckAt(upstream, id, record.relation, record.head, record.last_modified, now);
    check.facets_json = record.facets_json;
    check.lags = std::move(lags);
    check.signals = SeenOf(round, id);
    check.fixes_through = through;
    out.checks.push_back(std::move(check));
  }
  out.summary = std::to_string(round.listed.size()) + " listed, " +
                std::to_string(round.reads.size()) + " read at a new head (" +
                std::to_string(out.failed.size()) + " failed), " + std::to_string(round.followed) +
                " followed by their own request (" + std::to_string(round.deferred) +
                " deferred), " + std::to_string(round.evicted.size()) + " evicted, " +
                std::to_string(round.not_admitted) + " not admitted, " +
                std::to_string(out.lagging) + " lagging; " + std::to_string(round.requests) +
                " requests";
  out.evicted = std::move(round.evicted);
  return out;
}

Status RecordDerivativeRound(store::Store& writer, const std::string& upstream,
                             const ClassifiedDerivativeRound& classified, int64_t now,
                             const store::DerivativeTargets& targets) {
  return writer.Atomically([&]() -> Status {
    for (const DerivativeCheck& check : classified.checks) {
      if (Status s = writer.derivatives().RecordCheck(check, now, targets); !s.ok()) return s;
    }
    if (Status s = writer.derivatives().MarkListed(upstream, classified.sightings, now);
        !s.ok()) {
      return s;
    }
    return writer.derivatives().evictions().Evict(upstream, classified.evicted, now);
  });
}

std::string EvictionsText(const std::vector<derivatives::Eviction>& evicted) {
  std::string text;
  for (size_t i = 0; i < evicted.size() && i < kEvictionsNamed; ++i) {
    const derivatives::Eviction& e = evicted[i];
    text += (i ? ", " : "") + e.id + " (" + std::string(derivatives::EvictionReasonName(e.reason)) +
            ": " + e.detail + ")";
  }
  if (evicted.size() > kEvictionsNamed) {
    text += " and " + std::to_string(evicted.size() - kEvictionsNamed) + " more";
  }
  return text;
}

}  // namespace hubwatch::pipeline
