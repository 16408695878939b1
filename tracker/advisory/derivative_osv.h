#pragma once

// OSV advisories for derivatives: a fine-tune, adapter, quantization or merge that still ships
// the file(s) an upstream advisory's fix replaced gets one record of its own, per upstream
// advisory (schema-valid, like osv.h's):
//
//   id              x_HUBWATCH-<16 hex>: SHA-256 of "derivative", the derivative and the upstream
//                   advisory id, so the same pair always yields the same id
//   summary         "<derivative> still ships what <upstream> fixed: <upstream summary>" (at most
//                   120 characters; other words once it no longer lags)
//   details         Markdown: relation, head, what lags, how to fix it (re-copy the named files
//                   from upstream at the fixing revision); every upstream text escaped
//   affected        one GIT range on https://huggingface.co/<derivative>: introduced "0", and once
//                   it no longer lags, fixed = the derivative head checked then
//   related         [the upstream advisory]
//   references      the derivative's model page (PACKAGE), the upstream fix commit (FIX), the
//                   upstream advisory (ADVISORY, when advisory_base_url is set)
//   database_specific {derivative, relation, upstream, upstream_advisory, upstream_revision,
//                   upstream_parent, kind, impact, path, status, head, checked_at}
// Pure functions; thread-safe.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/derivatives/derivative.h"

namespace hubwatch::advisory {

struct DerivativeAdvisoryContext {
  std::string derivative;  // the derivative repo: "someone/Llama-3-8B-Instruct-GGUF"
  derivatives::Relation relation = derivatives::Relation::kFinetune;
  std::string upstream;          // the tracked repo
  derivatives::UpstreamFix fix;  // the upstream advisory the derivative is measured against
  std::string impact;            // the upstream change's impact ("behavioral"); "" to leave out
  derivatives::LagStatus status = derivatives::LagStatus::kLagging;
  std::string head;        // the derivative commit checked (40 hex)
  int64_t checked_at = 0;  // Unix seconds
  std::string published;   // RFC 3339 UTC ("...Z")
  std::string modified;    // RFC 3339 UTC
  std::string hub_url = "https://huggingface.co";
  // Where the upstream advisory is served ("https://hubwatch.example/v1/vulns"); "": no
  // ADVISORY reference (related still names it).
  std::string advisory_base_url{};
};

// The derivative advisory id of (derivative, upstream advisory).
std::string DerivativeAdvisoryId(std::string_view derivative, std::string_view upstream_advisory);

// The record. status != lagging adds the fixed event (head) and says how it stopped lagging.
nlohmann::json BuildDerivativeOsv(const DerivativeAdvisoryContext& context);

// The status a stored derivative record says ("lagging", ...), nullopt when it holds none.
std::optional<derivatives::LagStatus> DerivativeOsvStatus(const nlohmann::json& osv);

}  // namespace hubwatch::advisory
