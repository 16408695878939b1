#pragma once

// Parses Hub response bodies into the value types of hub_types.h. Untrusted input: malformed
// JSON or missing/mistyped fields give a kProtocol HubError naming the field; never a crash.
// Pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "tracker/hub/hub_error.h"
#include "tracker/hub/hub_types.h"

namespace hubwatch::hub {

HubResult<RepoRefs> ParseRefsJson(std::string_view body, const std::string& url);
HubResult<std::vector<CommitInfo>> ParseCommitsJson(std::string_view body, const std::string& url);
HubResult<std::vector<TreeEntry>> ParseTreeJson(std::string_view body, const std::string& url);
HubResult<ModelInfo> ParseModelInfoJson(std::string_view body, const std::string& url);
HubResult<std::vector<ModelSummary>> ParseModelListJson(std::string_view body,
                                                        const std::string& url);

}  // namespace hubwatch::hub
