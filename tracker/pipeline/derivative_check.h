#pragma once

// DerivativeCheck: one round over a tracked repo's derivatives, from the Hub.
//
//   1. The listing, once per relation: GET /api/models?filter=base_model:{relation}:{upstream}
//      &sort=lastModified&expand=sha&expand=lastModified&expand=tags&expand=siblings, newest
//      first, pages followed, at most `max` derivatives over all relations (the newest).
//   2. A derivative listed at the head its last check read costs nothing more: the listing's sha
//      is the validator. One at a new head is read at that commit:
//        - its facet files (derivatives/facets.h) that the listing's siblings name, each one
//          GET resolve/{sha}/{path} (not kept in the ETag cache: a commit's file never changes);
//        - else, when it ships GGUF files, the metadata of one (by name, the first shard only,
//          no mmproj/mtp/imatrix sidecars): range reads of its start, never the tensors;
//        - else nothing (an adapter): every fix is not applicable.
//      `concurrency` derivatives are read at once, so a round never takes over the client.
//
// What the round found is a value; the caller classifies (LagsOf) and stores. Thread safety:
// the client's loop thread. REQUIRES: the client outlives the check.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tracker/derivatives/derivative.h"
#include "tracker/derivatives/facets.h"
#include "tracker/derivatives/lag.h"
#include "tracker/hub/client.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

struct DerivativeRoundInput {
  std::string upstream;
  std::vector<derivatives::Relation> relations;
  size_t max = 200;
  // Derivative id -> the head its stored check read: not read again while listed there.
  std::map<std::string, std::string> checked_heads;
  int concurrency = 2;
};

// One derivative read at a new head.
struct DerivativeRead {
  std::string id;
  derivatives::Relation relation = derivatives::Relation::kFinetune;
  std::string head;
  std::string last_modified;
  std::optional<derivatives::FacetSet> facets;  // nullopt: not read, `error` says why
  std::string error;
  std::string source;  // "files", "gguf:<path>" or "none"
};

struct DerivativeRound {
  std::optional<hub::HubError> listing_error;  // then nothing else is set
  std::vector<DerivativeRead> reads;           // derivatives at a new head
  std::vector<std::string> unchanged;          // listed at the head already checked
  std::vector<std::string> listed;             // every derivative listed, by id
  bool complete = false;  // every relation's listing was read to its end (under `max`)
  int requests = 0;       // HTTP requests the round sent (pages, hops, retries)
};

void CheckDerivatives(hub::HubClient& hub, DerivativeRoundInput input,
                      std::function<void(DerivativeRound)> done);

// The fixes of `upstream` a derivative is checked against, with what each changed: upstream's
// facets at the fixing revision and at its parent, from the stored files. Fixes that changed
// nothing a check can see, or whose parent is not stored, are left out.
Result<std::vector<derivatives::FixFacets>> LoadFixFacets(store::Store& store,
                                                          const std::string& upstream);

// One lag per fix.
std::vector<derivatives::AdvisoryLag> LagsOf(const std::vector<derivatives::FixFacets>& fixes,
                                             const derivatives::FacetSet& facets);

// The GGUF file a check reads of `files` (sibling names): "" when none.
std::string GgufFileToRead(const std::vector<std::string>& files);

}  // namespace hubwatch::pipeline
