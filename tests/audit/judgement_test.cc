// Judgement and the reports, on evidence built here (the end-to-end test, audit_end_to_end.py,
// judges against a real store and server; fix_test.cc covers --fix).

#include "daemon/audit/judgement.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "daemon/audit/audit_report.h"
#include "daemon/audit/sarif.h"

namespace hubwatch::audit {
namespace {

const std::string kOld = "1111111111111111111111111111111111111111";
const std::string kNew = "2222222222222222222222222222222222222222";

ModelReference Ref(std::string revision, RevisionKind kind, std::string file = "train.py") {
  return {.file = std::move(file),
          .line = 3,
          .column = 9,
          .repo_id = "org/model",
          .revision = std::move(revision),
          .revision_kind = kind,
          .recognised_by = "python:from_pretrained"};
}

AuditAdvisory Advisory(std::string id, diff::Impact impact, std::string summary = "eos changed") {
  return {.id = std::move(id),
          .kind = "config",
          .impact = impact,
          .summary = std::move(summary),
          .fixed_in = kNew};
}

TEST(Judge, APinIsAffectedByWhatHoldsItAndToldWhichRevisionTakesEveryFix) {
  Evidence e{.tracked = true, .newest = kNew, .sha = kOld};
  e.advisories = {Advisory("A", diff::Impact::kCosmetic), Advisory("B", diff::Impact::kBreaking)};
  const std::vector<Finding> f = Judge({Ref(kOld, RevisionKind::kFullSha)}, {e}, "");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::kAffected);
  EXPECT_EQ(f[0].worst, diff::Impact::kBreaking);
  EXPECT_EQ(f[0].suggested_revision, kNew);
  EXPECT_NE(f[0].message.find("2 upstream changes (worst breaking"), std::string::npos);
  EXPECT_NE(f[0].message.find("revision=\"" + kNew + "\" takes every fix"), std::string::npos);
  EXPECT_TRUE(AnyAtOrAbove(f, diff::Impact::kBreaking));
  EXPECT_TRUE(AnyAtOrAbove(f, diff::Impact::kCosmetic));
}

TEST(Judge, EachVerdictFromItsEvidence) {
  const Evidence current{.tracked = true, .newest = kNew, .sha = kNew};
  const Evidence unknown{.tracked = true, .newest = kNew, .problem = "no revision 1234567"};
  Evidence received{.tracked = true, .newest = kNew};
  received.advisories = {Advisory("C", diff::Impact::kBehavioral)};
  const Evidence quiet{.tracked = true, .newest = kNew};
  const Evidence untracked;
  Evidence derivative;
  derivative.derivative =
      DerivativeLag{.upstream = "org/base", .relation = "quantized", .head = kOld, .current = true};
  derivative.derivative->lagging = {Advisory("D", diff::Impact::kBehavioral)};
  const std::vector<Finding> f =
      Judge({Ref(kNew, RevisionKind::kFullSha), Ref("1234567", RevisionKind::kShortSha),
             Ref("main", RevisionKind::kName), Ref("", RevisionKind::kFloating),
             Ref("", RevisionKind::kComputed), Ref("", RevisionKind::kFloating),
             Ref("", RevisionKind::kFloating)},
            {current, unknown, received, quiet, quiet, untracked, derivative}, "2026-01-01");
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f[0].verdict, Verdict::kCurrent);
  EXPECT_EQ(f[0].suggested_revision, "");  // already the newest
  EXPECT_NE(f[0].message.find("(the newest revision)"), std::string::npos);
  EXPECT_EQ(f[1].verdict, Verdict::kUnknownRevision);
  EXPECT_NE(f[1].message.find("no revision 1234567"), std::string::npos);
  EXPECT_EQ(f[2].verdict, Verdict::kReceived);
  EXPECT_NE(f[2].message.find("follows main and received 1 upstream change"), std::string::npos);
  EXPECT_EQ(f[3].verdict, Verdict::kFloating);
  EXPECT_NE(f[3].message.find("nothing received since 2026-01-01"), std::string::npos);
  EXPECT_EQ(f[3].suggested_revision, kNew);
  EXPECT_EQ(f[4].verdict, Verdict::kComputed);
  EXPECT_FALSE(f[4].worst);
  EXPECT_EQ(f[5].verdict, Verdict::kNotTracked);
  EXPECT_NE(f[5].message.find("add {\"id\": \"org/model\"}"), std::string::npos);
  EXPECT_EQ(f[6].verdict, Verdict::kLagging);
  EXPECT_NE(f[6].message.find("a quantization of org/base"), std::string::npos);
  EXPECT_EQ(f[6].worst, diff::Impact::kBehavioral);
  EXPECT_TRUE(AnyAtOrAbove(f, diff::Impact::kBehavioral));
  EXPECT_FALSE(AnyAtOrAbove(f, diff::Impact::kBreaking));
}

// Upstream's text and the tree's file names reach a terminal, JSON and SARIF: escaped in each.
TEST(Report, HostileNamesAndSummariesAreEscapedInEveryForm) {
  Evidence e{.tracked = true, .newest = kNew, .sha = kOld};
  e.advisories = {Advisory("A", diff::Impact::kBehavioral, "fix \x1b[2J\xe2\x80\xae evil")};
  const std::string file = "odd\x1b]0;x\x07\xff name.py";
  AuditResult audit{.judged_by = "store x.db"};
  audit.scan.references = {Ref(kOld, RevisionKind::kFullSha, file)};
  audit.findings = Judge(audit.scan.references, {e}, "");
  const std::string text = RenderText(audit);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos);
  EXPECT_NE(text.find("\\xff"), std::string::npos);
  // The file name stays the tree's own (JSON escapes its controls; bytes that are not UTF-8
  // are written as \xNN, or dump() would throw); upstream's summary is made safe to print.
  const nlohmann::json json = nlohmann::json::parse(RenderJson(audit).dump());
  const nlohmann::json& ref = json["references"][0];
  EXPECT_EQ(ref["file"], "odd\x1b]0;x\x07\\xff name.py");
  const std::string summary = ref["advisories"][0]["summary"];
  EXPECT_EQ(summary.find('\x1b'), std::string::npos);
  EXPECT_EQ(ref["message"].get<std::string>().find('\x1b'), std::string::npos);
  const nlohmann::json sarif = RenderSarif(audit, "1.0");
  const std::string uri =
      sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
  EXPECT_EQ(uri, "odd%1B%5D0%3Bx%07%FF%20name.py");
}

TEST(Sarif, LevelsFollowImpactAndCleanPinsAreNotResults) {
  Evidence breaking{.tracked = true, .newest = kNew, .sha = kOld};
  breaking.advisories = {Advisory("A", diff::Impact::kBreaking)};
  Evidence behavioral = breaking;
  behavioral.advisories = {Advisory("B", diff::Impact::kBehavioral)};
  const Evidence clean{.tracked = true, .newest = kNew, .sha = kNew};
  const Evidence untracked;
  AuditResult audit;
  audit.scan.references = {
      Ref(kOld, RevisionKind::kFullSha, "a.py"), Ref(kOld, RevisionKind::kFullSha, "b.py"),
      Ref(kNew, RevisionKind::kFullSha, "c.py"), Ref("", RevisionKind::kFloating, "d.py")};
  audit.findings = Judge(audit.scan.references, {breaking, behavioral, clean, untracked}, "");
  const nlohmann::json sarif = RenderSarif(audit, "1.0");
  EXPECT_EQ(sarif["version"], "2.1.0");
  const nlohmann::json& run = sarif["runs"][0];
  const nlohmann::json& results = run["results"];
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["level"], "error");
  EXPECT_EQ(results[1]["level"], "warning");
  EXPECT_EQ(results[2]["level"], "note");
  for (const nlohmann::json& r : results) {
    const size_t index = r["ruleIndex"];
    EXPECT_EQ(run["tool"]["driver"]["rules"][index]["id"], r["ruleId"]);
  }
  EXPECT_EQ(results[2]["ruleId"], "HW005");  // not tracked
  EXPECT_EQ(results[0]["properties"]["suggested_revision"], kNew);
}

}  // namespace
}  // namespace hubwatch::audit
