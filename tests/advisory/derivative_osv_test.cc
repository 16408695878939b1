// The OSV record of a derivative that lags an upstream fix: ids, summary, the range as it catches
// up, references, database_specific, and upstream text escaped in the Markdown. The official
// schema checks these records too (osv_samples.cc, OsvSamples.MatchOfficialSchema).

#include "tracker/advisory/derivative_osv.h"

#include <gtest/gtest.h>

#include "tracker/advisory/osv.h"

namespace hubwatch::advisory {
namespace {

using derivatives::LagStatus;
using derivatives::Relation;

const std::string kFixSha = "c4a54320a52ed5f88b7a2f84496903ea4ff07b45";
const std::string kParent = "1448453bdb895762499deb4176c1dd83b145fac1";
const std::string kHead = "0123456789abcdef0123456789abcdef01234567";

DerivativeAdvisoryContext Context() {
  DerivativeAdvisoryContext ctx;
  ctx.derivative = "someone/Meta-Llama-3-8B-Instruct-GGUF";
  ctx.relation = Relation::kQuantized;
  ctx.upstream = "meta-llama/Meta-Llama-3-8B-Instruct";
  ctx.fix = {
      .advisory_id = "x_HUBWATCH-1111222233334444",
      .change_id = 12,
      .kind = "generation_config",
      .path = "generation_config.json",
      .sha = kFixSha,
      .parent_sha = kParent,
      .summary = "generation config changed in meta-llama/Meta-Llama-3-8B-Instruct at c4a5432"};
  ctx.impact = "behavioral";
  ctx.status = LagStatus::kLagging;
  ctx.head = kHead;
  ctx.checked_at = 1739527200;  // 2025-02-14T10:00:00Z
  ctx.published = "2025-02-14T10:00:00Z";
  ctx.modified = "2025-02-14T10:05:00Z";
  return ctx;
}

TEST(DerivativeOsv, IdsAreStablePerDerivativeAndUpstreamAdvisory) {
  const std::string id = DerivativeAdvisoryId("a/b", "x_HUBWATCH-1");
  EXPECT_EQ(id, DerivativeAdvisoryId("a/b", "x_HUBWATCH-1"));
  EXPECT_EQ(id.rfind(kIdPrefix, 0), 0u);
  EXPECT_EQ(id.size(), std::string(kIdPrefix).size() + 16);
  EXPECT_NE(id, DerivativeAdvisoryId("a/c", "x_HUBWATCH-1"));
  EXPECT_NE(id, DerivativeAdvisoryId("a/b", "x_HUBWATCH-2"));
  // The status, head and times do not change the id.
  DerivativeAdvisoryContext ctx = Context();
  const nlohmann::json lagging = BuildDerivativeOsv(ctx);
  ctx.status = LagStatus::kFixed;
  ctx.head = std::string(40, 'a');
  EXPECT_EQ(BuildDerivativeOsv(ctx)["id"], lagging["id"]);
  EXPECT_EQ(lagging["id"], DerivativeAdvisoryId(ctx.derivative, ctx.fix.advisory_id));
}

TEST(DerivativeOsv, ALaggingRecordHasAnOpenRangeTheRelatedAdvisoryAndHowToFix) {
  const nlohmann::json osv = BuildDerivativeOsv(Context());
  EXPECT_EQ(osv["schema_version"], kOsvSchemaVersion);
  EXPECT_EQ(osv["published"], "2025-02-14T10:00:00Z");
  EXPECT_EQ(osv["modified"], "2025-02-14T10:05:00Z");
  EXPECT_EQ(osv["summary"],
            "someone/Meta-Llama-3-8B-Instruct-GGUF still ships what "
            "meta-llama/Meta-Llama-3-8B-Instruct fixed: generation config c...");
  EXPECT_LE(osv["summary"].get<std::string>().size(), 120u);
  EXPECT_EQ(osv["related"], nlohmann::json::array({"x_HUBWATCH-1111222233334444"}));
  const nlohmann::json& range = osv["affected"][0]["ranges"][0];
  EXPECT_EQ(range["type"], "GIT");
  EXPECT_EQ(range["repo"], "https://huggingface.co/someone/Meta-Llama-3-8B-Instruct-GGUF");
  EXPECT_EQ(range["events"], nlohmann::json::parse(R"([{"introduced": "0"}])"));
  EXPECT_EQ(osv["references"][0]["type"], "PACKAGE");
  EXPECT_EQ(osv["references"][0]["url"],
            "https://huggingface.co/someone/Meta-Llama-3-8B-Instruct-GGUF");
  EXPECT_EQ(osv["references"][1]["type"], "FIX");
  EXPECT_EQ(osv["references"][1]["url"],
            "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/commit/" + kFixSha);
  EXPECT_EQ(osv["references"].size(), 2u);  // no advisory base URL
  const nlohmann::json& db = osv["database_specific"];
  EXPECT_EQ(db["derivative"], "someone/Meta-Llama-3-8B-Instruct-GGUF");
  EXPECT_EQ(db["relation"], "quantized");
  EXPECT_EQ(db["upstream"], "meta-llama/Meta-Llama-3-8B-Instruct");
  EXPECT_EQ(db["upstream_advisory"], "x_HUBWATCH-1111222233334444");
  EXPECT_EQ(db["upstream_revision"], kFixSha);
  EXPECT_EQ(db["upstream_parent"], kParent);
  EXPECT_EQ(db["kind"], "generation_config");
  EXPECT_EQ(db["impact"], "behavioral");
  EXPECT_EQ(db["status"], "lagging");
  EXPECT_EQ(db["head"], kHead);
  EXPECT_EQ(db["checked_at"], "2025-02-14T10:00:00Z");
  EXPECT_EQ(DerivativeOsvStatus(osv), LagStatus::kLagging);
  const std::string details = osv["details"];
  EXPECT_NE(details.find("is a quantization of `meta-llama/Meta-Llama-3-8B-Instruct`"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("- status: **lagging**"), std::string::npos) << details;
  EXPECT_NE(details.find("**How to fix:** copy `generation_config.json` from "
                         "`meta-llama/Meta-Llama-3-8B-Instruct` at revision `" +
                         kFixSha + "`"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/blob/" +
                         kFixSha + "/generation_config.json"),
            std::string::npos)
      << details;
}

TEST(DerivativeOsv, OnceItNoLongerLagsTheRangeIsFixedAtItsHead) {
  DerivativeAdvisoryContext ctx = Context();
  for (LagStatus status : {LagStatus::kFixed, LagStatus::kDiverged, LagStatus::kNotApplicable}) {
    ctx.status = status;
    const nlohmann::json osv = BuildDerivativeOsv(ctx);
    EXPECT_EQ(osv["affected"][0]["ranges"][0]["events"],
              nlohmann::json::parse(R"([{"introduced": "0"}, {"fixed": ")" + kHead + "\"}]"));
    EXPECT_EQ(osv["database_specific"]["status"], derivatives::LagStatusName(status));
    EXPECT_EQ(DerivativeOsvStatus(osv), status);
    EXPECT_EQ(osv["summary"].get<std::string>().find("still ships"), std::string::npos);
    const bool advice = status == LagStatus::kDiverged;
    EXPECT_EQ(osv["details"].get<std::string>().find("How to fix") != std::string::npos, advice)
        << osv["details"];
  }
  ctx.status = LagStatus::kFixed;
  EXPECT_EQ(BuildDerivativeOsv(ctx)["summary"].get<std::string>().rfind(
                "someone/Meta-Llama-3-8B-Instruct-GGUF caught up with what ", 0),
            0u);
  EXPECT_FALSE(DerivativeOsvStatus(nlohmann::json::object()).has_value());
  EXPECT_FALSE(DerivativeOsvStatus({{"database_specific", {{"status", "late"}}}}).has_value());
}

TEST(DerivativeOsv, CrossFileFixesNameTheirFilesAndAnAdvisoryBaseUrlAddsAReference) {
  DerivativeAdvisoryContext ctx = Context();
  ctx.fix.kind = "special_tokens";
  ctx.fix.path = "";
  ctx.fix.parent_sha = "";
  ctx.advisory_base_url = "https://hubwatch.example/v1/vulns";
  const nlohmann::json osv = BuildDerivativeOsv(ctx);
  const std::string details = osv["details"];
  EXPECT_NE(details.find("- files: `tokenizer_config.json`, `special_tokens_map.json`"),
            std::string::npos)
      << details;
  EXPECT_EQ(details.find("(parent"), std::string::npos);
  EXPECT_EQ(osv["references"][2]["type"], "ADVISORY");
  EXPECT_EQ(osv["references"][2]["url"],
            "https://hubwatch.example/v1/vulns/x_HUBWATCH-1111222233334444");
}

TEST(DerivativeOsv, UpstreamTextCannotShapeTheMarkdownOrTheUrls) {
  DerivativeAdvisoryContext ctx = Context();
  ctx.derivative = "mallory/`x` [click](http://evil)";
  ctx.fix.summary = "line\n# heading <img src=x onerror=alert(1)> **bold** [a](b) ``` `";
  ctx.fix.path = "weird`` name.json";
  const nlohmann::json osv = BuildDerivativeOsv(ctx);
  const std::string details = osv["details"];
  // Repo text goes in code spans whose fences it cannot close.
  EXPECT_NE(details.find("``mallory/`x` [click](http://evil)`` is a quantization"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("```weird`` name.json```"), std::string::npos) << details;
  // Plain text: one line, every Markdown and HTML character escaped.
  EXPECT_NE(details.find("> line \\# heading \\<img src\\=x onerror\\=alert\\(1\\)\\> \\*\\*bold"
                         "\\*\\* \\[a\\]\\(b\\) \\`\\`\\` \\`\n"),
            std::string::npos)
      << details;
  EXPECT_EQ(details.find("\n# heading"), std::string::npos);
  for (size_t at = details.find('<'); at != std::string::npos; at = details.find('<', at + 1)) {
    EXPECT_EQ(details[at - 1], '\\') << "an unescaped < at " << at << " in " << details;
  }
  // URLs percent-encode what is not a path character.
  EXPECT_EQ(osv["references"][0]["url"],
            "https://huggingface.co/mallory/%60x%60%20%5Bclick%5D%28http%3A//evil%29");
  EXPECT_EQ(osv["summary"].get<std::string>().find('\n'), std::string::npos);
  EXPECT_LE(osv["summary"].get<std::string>().size(), 120u);
}

}  // namespace
}  // namespace hubwatch::advisory
