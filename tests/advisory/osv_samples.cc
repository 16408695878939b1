// Prints a JSON array of OSV records, one for each change kind and impact and one for each
// derivative status and relation (hostile repo text among them), for validate_osv.py to check
// against the official schema.

#include <iostream>

#include "tracker/advisory/derivative_osv.h"
#include "tracker/advisory/osv.h"

int main() {
  using namespace hubwatch;
  nlohmann::json out = nlohmann::json::array();
  int i = 0;
  for (int k = 0; k <= static_cast<int>(diff::ChangeKind::kError); ++k) {
    diff::Change c;
    c.kind = static_cast<diff::ChangeKind>(k);
    c.impact = static_cast<diff::Impact>(k % 3);
    c.path = k % 2 ? "config.json" : "";
    c.summary = "sample " + std::string(diff::KindName(c.kind)) + " change";
    c.details = k % 2 ? nlohmann::json{{"unified_diff", "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+```y\n"}}
                      : nlohmann::json{{"ops", {{{"op", "replace"}, {"path", "/eos_token_id"}}}}};
    if (c.kind == diff::ChangeKind::kChatTemplate) {  // with its rendered-prompt diffs
      c.details["rendered"] = {
          {"impact", "behavioral"},
          {"changed", 2},
          {"conversations",
           {{{"conversation", "multi_turn"},
             {"changed", true},
             {"unified_diff",
              "--- before/multi_turn\n+++ after/multi_turn\n@@ -1 +1 @@\n-<s>[INST] Hi "
              "[/INST]\n+<s>[INST] Hi[/INST]\n"}},
            {{"conversation", "system_message"},
             {"changed", true},
             {"before_error", "Conversation roles must alternate"}},
            {{"conversation", "single_turn"}, {"changed", false}}}}};
    }
    advisory::AdvisoryContext ctx;
    ctx.repo = "meta-llama/Meta-Llama-3-8B-Instruct";
    ctx.revision = std::string(39, 'a') + static_cast<char>('0' + k % 10);
    ctx.parent = std::string(40, 'b');
    ctx.introduced = k % 3 ? std::string(40, 'c') : "0";
    ctx.published = advisory::Rfc3339(1713398400 + i);
    ctx.modified = advisory::Rfc3339(1713398400 + 60 + i);
    if (c.kind == diff::ChangeKind::kEstimate) ctx.estimate_delta = {{"params.total", {1, 2}}};
    out.push_back(advisory::BuildOsv(c, ctx));
    ++i;
  }
  for (int k = 0; k < 8; ++k) {
    advisory::DerivativeAdvisoryContext ctx;
    ctx.derivative = k % 2 ? "someone/Llama-3-8B-Instruct-GGUF" : "mallory/`]\n# x<script>";
    ctx.relation = static_cast<derivatives::Relation>(k % 4);
    ctx.upstream = "meta-llama/Meta-Llama-3-8B-Instruct";
    ctx.fix = {"x_HUBWATCH-00000000000000" + std::to_string(10 + k),
               k,
               k % 2 ? "generation_config" : "special_tokens",
               k % 2 ? "generation_config.json" : "",
               std::string(40, 'd'),
               k % 3 ? std::string(40, 'e') : "",
               "generation config changed in meta-llama/Meta-Llama-3-8B-Instruct at ddddddd"};
    ctx.impact = "behavioral";
    ctx.status = static_cast<derivatives::LagStatus>(k % 4);
    ctx.head = std::string(39, 'f') + static_cast<char>('0' + k);
    ctx.checked_at = 1713398400 + k;
    ctx.published = advisory::Rfc3339(1713398400 + k);
    ctx.modified = advisory::Rfc3339(1713398500 + k);
    if (k == 3) ctx.advisory_base_url = "https://hubwatch.example/v1/vulns";
    out.push_back(advisory::BuildDerivativeOsv(ctx));
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}
