#pragma once

// Reading one derivative at a new head (step 4 of a derivative round, derivative_check.h): what
// it ships that a check can compare with upstream's fixes, read at that commit.
//   - its facet files (derivatives/facets.h) that its siblings name, each one
//     GET resolve/{sha}/{path} (not kept in the ETag cache: a commit's file never changes);
//   - else, when it ships GGUF files, the metadata of one (GgufFileToRead: by name, the first
//     shard only, no mmproj/mtp/imatrix sidecars): range reads of its start, never the tensors;
//   - else nothing (an adapter): every fix is not applicable.
//
// Thread safety: the client's loop thread. REQUIRES: the client outlives the read.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tracker/derivatives/derivative.h"
#include "tracker/derivatives/facets.h"
#include "tracker/hub/client.h"

namespace hubwatch::pipeline {

// One derivative read at a new head.
struct DerivativeRead {
  std::string id;
  derivatives::Relation relation = derivatives::Relation::kFinetune;
  std::string head;
  std::string last_modified;
  std::optional<derivatives::FacetSet> facets;  // nullopt: not read, `error` says why
  std::string error;
  std::string source;                           // "files", "gguf:<path>" or "none"
  std::optional<derivatives::Signals> signals;  // as seen now; nullopt: a follow-up failed
};
// Reads `read.id` at `read.head` from `files` (its sibling names) as above, filling
// read.facets, or read.error when a request failed, and read.source ("files", "gguf:<path>",
// "none"). `done(read, requests)` runs once, with the HTTP requests the read sent.
void ReadDerivativeAt(hub::HubClient& hub, DerivativeRead read, std::vector<std::string> files,
                      std::function<void(DerivativeRead, int requests)> done);

// The GGUF file a check reads of `files` (sibling names): "" when none.
std::string GgufFileToRead(const std::vector<std::string>& files);

}  // namespace hubwatch::pipeline
