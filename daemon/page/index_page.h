#pragma once

// The index (GET /, GET /index.json): the families of the tracked models with their counts,
// and one page of models - one family's, or what the search form asked for - at most
// kIndexPageRows rows, in id order from a keyset cursor (the last id shown: `after`, or the
// first: `before`), never an offset. Nothing here reads more than one page of repos.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon/page/document.h"
#include "estimator/base/result.h"
#include "tracker/store/records.h"
#include "tracker/store/repo_pages.h"
#include "tracker/store/store.h"

namespace hubwatch::page {

// The family of a model whose estimate names no model_type (a checkpoint without config.json).
inline constexpr char kNoModelTypeFamily[] = "no model_type";

inline constexpr int64_t kIndexPageRows = 100;
// Families listed on a page (by name); past it, the search form's family field finds the rest.
inline constexpr int64_t kIndexFamilies = 300;

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

// What a page of the index was asked for: the filters and the cursor (search.limit: the rows
// per page, 1 to kIndexPageRows), and the "changed since" text as given (for the form).
struct IndexQuery {
  store::RepoSearch search;
  std::string changed_since;
};

struct IndexPage {
  IndexQuery query;                          // as shown (the landing page's family filled in)
  std::vector<store::FamilyCount> families;  // the first kIndexFamilies by name
  bool more_families = false;
  int64_t total = 0;  // repos tracked
  std::vector<IndexRow> rows;
  std::string next_after;       // the next page's cursor; "" on the last page
  std::string previous_before;  // the previous page's; "" on the first
};

// Whether the query asks for anything but a cursor (a family or a search).
bool HasFilter(const store::RepoSearch& search);

// One page of the index. With `land` and no filter, the page of the family with the most
// models (see index_page.cc). Reads one page of repos, one estimate and one change each.
Result<IndexPage> LoadIndexPage(store::Store& store, IndexQuery query, bool land);
Document BuildIndexPage(const IndexPage& page);
// hubwatch.index/2: the families with their counts, the page's models, `next_after` (the
// cursor), `next` and `previous` (the paths of those pages, or null), and /calibration's summary.
nlohmann::json IndexJson(const IndexPage& page);

// The path of the index page (`base`: "/" or "/index.json") for `query` with the cursor
// replaced: after `after`, or before `before` when that is set.
std::string IndexHref(const std::string& base, const IndexQuery& query, const std::string& after,
                      const std::string& before);

}  // namespace hubwatch::page
