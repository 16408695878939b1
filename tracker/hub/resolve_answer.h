#pragma once

// What a resolve exchange (HEAD or GET /{id}/resolve/{rev}/{path}) says about the file: its
// identity from the Hub's headers (X-Repo-Commit, X-Linked-Etag, X-Linked-Size) and, for a GET,
// its bytes checked against that identity. Internal to the Hub client. Pure functions;
// thread-safe.

#include <cstdint>
#include <string>

#include "tracker/hub/exchange.h"
#include "tracker/hub/hub_error.h"
#include "tracker/hub/hub_types.h"

namespace hubwatch::hub {

// The ResolvedFile of a resolve exchange for `url`, from its identity headers; an ETag loses W/
// and its quotes. A 3xx is content elsewhere (LFS): its Location is where. Errors (protocol): no
// X-Repo-Commit, an X-Linked-Size that is not a number.
HubResult<ResolvedFile> ResolvedFileOf(const ExchangeResponse& exchange, const std::string& url);

// The FileContent of a resolve GET for `url`: the body, whose length must match X-Linked-Size;
// is_lfs when it came from another origin. Errors (protocol): a body cut at `max_bytes`, a wrong
// length, and those of ResolvedFileOf.
HubResult<FileContent> FileContentOf(ExchangeResponse exchange, const std::string& url,
                                     uint64_t max_bytes);

}  // namespace hubwatch::hub
