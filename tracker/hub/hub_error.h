#pragma once

// Typed outcomes of a Hub call, and HubResult<T>: a T or a HubError. Value types, never thrown.
//
// The mapping follows huggingface_hub's hf_raise_for_status, in its order (code before message):
// RevisionNotFound, EntryNotFound, GatedRepo (401 anonymous vs 403 not approved), "Access to this
// resource is disabled.", RepoNotFound or any other 401 on a repo URL (the Hub does not reveal
// whether a repo exists to anonymous callers) unless the message says the token is invalid.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "estimator/base/clock.h"
#include "estimator/base/result.h"
#include "tracker/hub/http_types.h"

namespace hubwatch::hub {

enum class HubErrorKind {
  kNotFound,          // repo missing, private, or (anonymous) any 401 on a repo URL
  kGatedAnonymous,    // 401 GatedRepo: log in to see this file
  kGatedNotApproved,  // 403 GatedRepo: logged in but not in the authorized list
  kRevisionNotFound,
  kEntryNotFound,
  kDisabled,
  kRateLimited,   // 429, or a wait longer than the policy allows
  kTransient,     // 408, 5xx, timeout, connection failures (after retries)
  kProtocol,      // bad JSON, truncated body, wrong length, Range ignored, bad header
  kInvalidFile,   // the file was served as asked, but its content is not a valid file of its
                  // format (a GGUF of version 0, an empty .gguf, a safetensors header that lies)
  kCertificate,   // TLS: the server's certificate could not be verified (never retried)
  kUnauthorized,  // the token was rejected
  kForbidden,     // other 403
  kBadRequest,    // 400 (e.g. unknown expand value)
  kOffline,       // HF_HUB_OFFLINE: no request was sent
  kInvalidArgument,
  kShutdown,
  kUnexpectedStatus,
};

std::string_view HubErrorKindName(HubErrorKind kind);

struct HubError {
  HubErrorKind kind = HubErrorKind::kUnexpectedStatus;
  int http_status = 0;                       // 0 when no response
  std::string error_code;                    // X-Error-Code
  std::string error_message;                 // X-Error-Message
  std::string detail;                        // what we saw, for people; never holds the token
  std::string url;                           // the request URL (URLs never hold the token)
  std::optional<WallTime> rate_limit_reset;  // kRateLimited: when the bucket refills

  // "not found (401 ...): <detail>" in one line.
  std::string ToString() const;
  // For APIs that speak hubwatch::Error.
  Error ToError() const;
};

// A T, or the HubError that kept the call from producing it.
template <class T>
using HubResult = Result<T, HubError>;

// The typed error for a finished response whose status is not a success.
HubError ErrorFromResponse(const HttpResponse& response, std::string url);
// The typed error for a transfer that did not finish.
HubError ErrorFromTransport(const TransportError& error, std::string url);
HubError ProtocolError(std::string detail, std::string url, int http_status = 0);
// The typed error for a file whose bytes arrived intact but are not a valid file of its format:
// no HTTP status, since the exchange itself succeeded.
HubError InvalidFileError(std::string detail, std::string url);

}  // namespace hubwatch::hub
