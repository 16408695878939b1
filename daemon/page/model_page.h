#pragma once

// The model page (GET /models/{ns}/{name}) and the paste-a-config page (/plan) as Documents.
// The model page is led by change: the latest change and the pins it affects, then what changed
// upstream; then the estimate - headline, our count against the checkpoint, what it costs to
// run, what fits on which card, structure, the verifier - and the commands. /plan has the
// estimate's sections alone. Pure functions; thread-safe.

#include <string>
#include <vector>

#include "daemon/page/document.h"
#include "daemon/page/page_data.h"
#include "tracker/store/pins.h"

namespace hubwatch::page {

struct ModelPageInput {
  const store::RepoRecord* repo = nullptr;     // never null
  std::string sha;                             // the revision shown; "" when none is stored
  const RevisionEstimate* estimate = nullptr;  // never null
  const std::vector<RevisionHistory>* history = nullptr;  // never null; newest first
  std::vector<store::PinStatus> pins{};  // the repo's pins, as store::PinStatuses gives them
  std::string base_url;  // "http://host:port" for the commands (validated by the caller)
};

Document BuildModelPage(const ModelPageInput& in);

// /plan: the form (with what was posted, and the estimator's reason when it refused it), and
// when `estimate` is set the same sections as a model page without the upstream history.
Document BuildPlanPage(const PlanForm& form, const Estimate* estimate, const std::string& base_url);

}  // namespace hubwatch::page
