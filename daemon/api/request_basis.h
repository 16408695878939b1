#pragma once

// The estimate basis of a stored revision for a request (the model page, a re-estimate for
// the user's workload), at a cost bounded whatever upstream stored (internal to daemon/api):
//   - kept in ctx.bases: returned;
//   - else, when the revision's stored safetensors headers total at most
//     kMaxRequestHeaderBytes (what a POST /api/v1/plan body may hold, so such a request costs
//     no more than that route does): prepared on the request's thread and kept;
//   - else handed to ctx.preparer (one at a time, on a thread of its own) and not returned:
//     the caller says it is being prepared (503 with Retry-After, or the page's note). Without
//     a preparer (no read pool: tests), prepared here.
// Runs on the request's thread (a read pool worker for heavy routes), with its connection.

#include <cstdint>
#include <memory>
#include <string>

#include "daemon/api/api_context.h"
#include "daemon/page/page_data.h"
#include "estimator/base/result.h"

namespace hubwatch::api {

inline constexpr uint64_t kMaxRequestHeaderBytes = 1 << 20;

struct RequestBasis {
  std::shared_ptr<const page::RevisionBasis> basis;  // null: being prepared
  uint64_t header_bytes = 0;  // the stored headers' size as far as read (past the budget: at
                              // least that); 0 when the basis was kept
  bool busy = false;          // null because the preparer's queue is full
};
Result<RequestBasis> LookUpBasis(const ApiContext& ctx, store::Store& reads,
                                 const std::string& repo, const std::string& sha);

// "the estimate of REPO@SHA12 is being prepared (N MiB of safetensors headers): ...", for a
// null RequestBasis::basis.
std::string PreparingMessage(const RequestBasis& lookup, const std::string& repo,
                             const std::string& sha);

}  // namespace hubwatch::api
