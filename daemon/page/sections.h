#pragma once

// The model page's sections, each built from the estimate or the history (internal to
// daemon/page; model_page.h assembles them). Every builder quotes upstream text as plain text
// spans; the renderers escape it.

#include <string>
#include <vector>

#include "daemon/page/document.h"
#include "daemon/page/page_data.h"
#include "tracker/store/pins.h"
#include "estimator/estimate.h"

namespace hubwatch::page {

// "18.5 GB", "1.41 GB", "166.7 GB": two decimals under 10 GB, one above.
std::string Gb(double bytes);
// The headline paragraphs under the h1 (full fine-tune, LoRA, reconstruction note).
std::vector<Block> Headline(const Estimate& e);
Section CheckpointSection(const Estimate& e);
Section CostSection(const Estimate& e);
Section MemorySection(const Estimate& e);
Section StructureSection(const Estimate& e);
Section LintSection(const Estimate& e);
// The assumptions the memory and fit figures rest on, as one paragraph from the preset used.
std::string AssumptionsParagraph(const Estimate& e);
// The fix for a lint, by its code.
std::string LintFix(const std::string& code);

// The revision timeline of `repo`, newest first; `shown` is the revision the page is about.
Section HistorySection(const std::vector<RevisionHistory>& history, const std::string& repo,
                       const std::string& shown);
// The blocks that show one change's evidence (patch rows, diffs, tensor tables).
std::vector<Block> Evidence(const store::ChangeRecord& change);

// The commands that give the same numbers for your own model.
Section CommandsSection(const Estimate& e, const std::vector<std::string>& shard_files,
                        const std::string& base_url);

Tone ImpactTone(diff::Impact impact);

// The model page's first lines: the latest change that is not cosmetic (its summary, impact,
// revision and commit date, linked to its entry in the history), and each pin with the
// advisories that affect it and the revision that takes every fix.
std::vector<Block> ChangeLead(const std::vector<RevisionHistory>& history,
                              const std::vector<store::PinStatus>& pins);

}  // namespace hubwatch::page
