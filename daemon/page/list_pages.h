#pragma once

// The index (GET /, /index.json: tracked models grouped by family) and the change log
// (GET /changes: every tracked change, newest first, filtered and paginated).

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon/page/document.h"
#include "estimator/base/result.h"
#include "tracker/store/records.h"
#include "tracker/store/store.h"

namespace hubwatch::page {

// The family of a model whose estimate names no model_type (a checkpoint without config.json).
inline constexpr char kNoModelTypeFamily[] = "no model_type";

struct IndexRow {
  std::string repo;
  std::string family;  // model_type, "unknown" without an estimate
  std::string state;
  std::optional<uint64_t> params;  // unset: no estimate
  // Where the estimate's structure comes from: "modelled", or "checkpoint_tensors" (an
  // architecture hubwatch does not model, counted from its safetensors headers).
  std::string source;
  double full_finetune_bytes = 0, lora_bytes = 0, serve_weight_bytes = 0;
  std::optional<store::ChangeRecord> last_change;
};

// Every tracked repo with the figures of its latest estimate and its last change. Reads the
// store (one estimate and one change per repo).
Result<std::vector<IndexRow>> LoadIndex(store::Store& store);
Document BuildIndexPage(const std::vector<IndexRow>& rows);
nlohmann::json IndexJson(const std::vector<IndexRow>& rows);

// One page of GET /changes: the filters it was asked with, the changes, and the cursor of the
// next page (0: none).
struct ChangesPage {
  store::ChangeBrowse filter;
  std::string since;  // as asked (a revision or a time), "" for none
  std::vector<store::ChangeRecord> changes;
  int64_t next_before = 0;
};
Document BuildChangesPage(const ChangesPage& page);

}  // namespace hubwatch::page
