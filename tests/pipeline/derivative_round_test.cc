// A derivative round's classification without a Hub or a daemon: what is recorded as a check,
// what is only a sighting, what failed, what lags, and what the summary says.

#include "tracker/pipeline/derivative_round.h"

#include <gtest/gtest.h>

namespace hubwatch::pipeline {
namespace {

using derivatives::AdvisoryLag;
using derivatives::LagStatus;

constexpr char kFacet[] = "config.json#eos_token_id";
constexpr int64_t kNow = 1'700'000'000;

// One fix that changed the EOS id from hash "old" to hash "new".
derivatives::FixFacets EosFix() {
  derivatives::FixFacets fix;
  fix.advisory_id = "HW-1";
  fix.changed[kFacet] = {std::string("old"), std::string("new")};
  return fix;
}

derivatives::FacetSet FacetsWithEos(const std::string& hash) {
  derivatives::FacetSet facets;
  facets.files = {"config.json"};
  facets.values[kFacet] = hash;
  return facets;
}

derivatives::DerivativeRecord Stored(const std::string& id, const std::string& facets_json,
                                     LagStatus status) {
  derivatives::DerivativeRecord r;
  r.upstream = "org/upstream";
  r.id = id;
  r.head = "h-" + id;
  r.checked_at = kNow - 3600;
  r.facets_json = facets_json;
  AdvisoryLag lag;
  lag.advisory_id = "HW-1";
  lag.status = status;
  r.lags = {lag};
  return r;
}

DerivativeRead Read(const std::string& id, const std::string& head,
                    std::optional<derivatives::FacetSet> facets, const std::string& error) {
  DerivativeRead read;
  read.id = id;
  read.head = head;
  read.facets = std::move(facets);
  read.error = error;
  return read;
}

derivatives::Eviction NotFound(const std::string& id) {
  derivatives::Eviction e;
  e.id = id;
  e.reason = derivatives::EvictionReason::kNotFound;
  e.detail = "404";
  return e;
}

PreparedDerivativeRound Prepared() {
  PreparedDerivativeRound p;
  p.input.upstream = "org/upstream";
  p.fixes = {EosFix()};
  p.fixes_through = 42;
  // Stored as lagging, and still lagging: only seen again.
  p.stored["a/same"] =
      Stored("a/same", derivatives::FacetsToJson(FacetsWithEos("old")), LagStatus::kLagging);
  // Stored as fixed before the fix was known to differ: its facets say lagging now.
  p.stored["b/changed"] =
      Stored("b/changed", derivatives::FacetsToJson(FacetsWithEos("old")), LagStatus::kFixed);
  // Facets stored unreadably: the stored lags stand, and cover no new fix.
  p.stored["c/garbled"] = Stored("c/garbled", "{not json", LagStatus::kLagging);
  return p;
}

TEST(DerivativeRound, ReadsAreCheckedUnchangedOnesAreSightingsUnlessAStatusMoved) {
  DerivativeRound round;
  round.listed = {"d/new", "e/broken", "a/same", "b/changed", "c/garbled"};
  round.reads.push_back(Read("d/new", "h-d", FacetsWithEos("new"), ""));
  round.reads.push_back(Read("e/broken", "0123456789abcdef", std::nullopt, "HTTP 500"));
  round.unchanged = {"a/same", "b/changed", "c/garbled"};
  round.seen["a/same"].downloads = 7;
  round.evicted.push_back(NotFound("f/gone"));
  round.requests = 9;

  const ClassifiedDerivativeRound c = ClassifyDerivativeRound(Prepared(), round, kNow);

  std::map<std::string, const derivatives::DerivativeCheck*> checks;
  for (const auto& check : c.checks) checks[check.id] = &check;
  ASSERT_EQ(checks.size(), 3u);  // the two reads and the one whose status moved
  ASSERT_EQ(checks["d/new"]->lags.size(), 1u);
  EXPECT_EQ(checks["d/new"]->lags[0].status, LagStatus::kFixed);
  EXPECT_EQ(checks["d/new"]->fixes_through, 42);
  EXPECT_EQ(checks["d/new"]->checked_at, kNow);
  EXPECT_EQ(checks["e/broken"]->error, "HTTP 500");
  EXPECT_TRUE(checks["e/broken"]->lags.empty());
  EXPECT_FALSE(checks["e/broken"]->fixes_through);
  ASSERT_EQ(checks["b/changed"]->lags.size(), 1u);
  EXPECT_EQ(checks["b/changed"]->lags[0].status, LagStatus::kLagging);
  EXPECT_EQ(checks["b/changed"]->head, "h-b/changed");  // the stored head: nothing was read

  ASSERT_EQ(c.sightings.size(), 2u);
  EXPECT_EQ(c.sightings[0].id, "a/same");
  EXPECT_EQ(c.sightings[0].fixes_through, 42);
  ASSERT_TRUE(c.sightings[0].signals);
  EXPECT_EQ(c.sightings[0].signals->downloads, 7);
  EXPECT_EQ(c.sightings[1].id, "c/garbled");
  EXPECT_FALSE(c.sightings[1].fixes_through);  // stored lags kept cover only what they did

  ASSERT_EQ(c.failed.size(), 1u);
  EXPECT_EQ(c.failed[0].id, "e/broken");
  EXPECT_EQ(c.lagging, 3u);  // a/same, b/changed, c/garbled (as stored)
  ASSERT_EQ(c.evicted.size(), 1u);
  EXPECT_EQ(c.summary,
            "5 listed, 2 read at a new head (1 failed), 0 followed by their own request (0 "
            "deferred), 1 evicted, 0 not admitted, 3 lagging; 9 requests");
}

TEST(DerivativeRound, EvictionsTextNamesFiveAndCountsTheRest) {
  std::vector<derivatives::Eviction> evicted;
  for (int i = 0; i < 7; ++i) evicted.push_back(NotFound("o/" + std::to_string(i)));
  const std::string text = EvictionsText(evicted);
  EXPECT_EQ(text.rfind("o/0 (not_found: 404), o/1", 0), 0u) << text;
  EXPECT_NE(text.find("o/4 (not_found: 404) and 2 more"), std::string::npos) << text;
  EXPECT_EQ(text.find("o/5"), std::string::npos) << text;
  EXPECT_EQ(EvictionsText({}), "");
}

}  // namespace
}  // namespace hubwatch::pipeline
