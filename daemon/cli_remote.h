#pragma once

// The query commands' records read from a running daemon's HTTP API (--api URL) instead of its
// store: the same records, so the commands print the same text and JSON either way.
//
// Thread safety: as the ApiClient. Errors: the ApiClient's; a reply that is not what the API
// writes is an Io error naming the route.

#include <optional>
#include <string>
#include <vector>

#include "daemon/api_client.h"
#include "estimator/base/result.h"
#include "tracker/store/records.h"

namespace hubwatch::cli {

// GET /api/v1/repos/{repo}/changes: `since` and `kind` as the CLI's flags ("" = none).
Result<std::vector<store::ChangeRecord>> RemoteChanges(ApiClient& api, const std::string& repo,
                                                       const std::string& since,
                                                       const std::string& kind);

struct RemoteAdvisoryQuery {
  std::string repo, kind, since, affects;  // "" = none
};
// GET /api/v1/advisories, every page, each record whole (GET /v1/vulns/{id}).
Result<std::vector<store::AdvisoryRecord>> RemoteAdvisories(ApiClient& api,
                                                            const RemoteAdvisoryQuery& query);

struct RevisionWithChanges {
  store::RevisionRecord revision;
  std::vector<store::ChangeRecord> changes;
};
// The repo's revisions, newest first, each with its changes. An untracked repo is Unsupported.
Result<std::vector<RevisionWithChanges>> RemoteHistory(ApiClient& api, const std::string& repo);

}  // namespace hubwatch::cli
