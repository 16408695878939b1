#pragma once

// What each page of a Hub listing adds to the call's result: the page parsed (hub_json.h), its
// items appended, and whether to read the next page (LinkPager). Each function returns the page
// reader of one listing call, which fills `*out` as pages arrive; a page that does not parse
// ends the listing with its error. Internal to the Hub client.
//
// Thread safety: a reader runs on the client's loop thread, one page at a time; `out` is shared
// with the call's completion, which reads it once the listing ended.

#include <memory>
#include <optional>
#include <vector>

#include "tracker/hub/client.h"
#include "tracker/hub/hub_types.h"
#include "tracker/hub/link_pager.h"

namespace hubwatch::hub {

// One page; the repo id from the URL that answered (after redirects).
LinkPager::OnPage RefsPage(std::shared_ptr<std::optional<RepoRefs>> out);
// Every page until stop_at (excluded) or max_commits; total_count from the first page's
// X-Total-Count.
LinkPager::OnPage CommitsPages(std::shared_ptr<CommitList> out, CommitsOptions options);
LinkPager::OnPage TreePages(std::shared_ptr<std::vector<TreeEntry>> out);
// One page.
LinkPager::OnPage ModelInfoPage(std::shared_ptr<std::optional<ModelInfo>> out);
// Every page until max_results, or to the end of the page where last_wanted said true.
LinkPager::OnPage ModelListPages(std::shared_ptr<std::vector<ModelSummary>> out,
                                 ListModelsOptions options);

}  // namespace hubwatch::hub
