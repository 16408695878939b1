#pragma once

// Parses Hub response bodies into the value types of hub_types.h. Untrusted input: malformed
// JSON or missing/mistyped fields give a kProtocol HubError naming the field; never a crash.
// Pure functions.
//
// What is kept is bounded by the caps below, whatever the body holds: a body is parsed as a
// stream (json_shape.h) and only the fields read here are materialised, each upstream list to
// its cap. Every cap is far above what the Hub sends, so only a hostile or broken answer
// reaches one.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/hub/hub_error.h"
#include "tracker/hub/hub_types.h"

namespace hubwatch::hub {

// Entries of one page: models of a listing page, commits, tree entries. The Hub serves at most
// 1,000 a page. More is a protocol error: a page cut short would read as models, commits or
// files that do not exist.
inline constexpr size_t kMaxPageEntries = 10'000;
// Each list of /refs (branches, tags, converts, pull requests), all on one page: checkpoint
// repos keep hundreds to a few thousand branches. More is a protocol error: a ref cut off would
// read as deleted.
inline constexpr size_t kMaxRefsPerList = 20'000;
// Tags of a model (info or listing item): repos have tens to a few hundred, a speech model of a
// thousand languages about 1,200. The first kMaxModelTags are kept; tags_cut says more came.
inline constexpr size_t kMaxModelTags = 4'096;
// Files of a model (siblings, info or listing item): the Hub asks repos to stay under 100,000
// files. The first kMaxModelSiblings are kept; siblings_cut says more came.
inline constexpr size_t kMaxModelSiblings = 100'000;
// Authors of one commit: its author and co-authors. The first kMaxCommitAuthors are kept.
inline constexpr size_t kMaxCommitAuthors = 256;
// Dtypes of safetensors.parameters: safetensors defines about twenty. The first
// kMaxSafetensorsDtypes are kept.
inline constexpr size_t kMaxSafetensorsDtypes = 64;

HubResult<RepoRefs> ParseRefsJson(std::string_view body, const std::string& url);
HubResult<std::vector<CommitInfo>> ParseCommitsJson(std::string_view body, const std::string& url);
HubResult<std::vector<TreeEntry>> ParseTreeJson(std::string_view body, const std::string& url);
HubResult<ModelInfo> ParseModelInfoJson(std::string_view body, const std::string& url);
HubResult<std::vector<ModelSummary>> ParseModelListJson(std::string_view body,
                                                        const std::string& url);

}  // namespace hubwatch::hub
