#include "tracker/hub/hub_error.h"

namespace hubwatch::hub {

std::string_view HubErrorKindName(HubErrorKind kind) {
  switch (kind) {
    case HubErrorKind::kNotFound:
      return "not found";
    case HubErrorKind::kGatedAnonymous:
      return "gated (log in)";
    case HubErrorKind::kGatedNotApproved:
      return "gated (not approved)";
    case HubErrorKind::kRevisionNotFound:
      return "revision not found";
    case HubErrorKind::kEntryNotFound:
      return "entry not found";
    case HubErrorKind::kDisabled:
      return "disabled";
    case HubErrorKind::kRateLimited:
      return "rate limited";
    case HubErrorKind::kTransient:
      return "transient";
    case HubErrorKind::kProtocol:
      return "protocol";
    case HubErrorKind::kInvalidFile:
      return "invalid file";
    case HubErrorKind::kCertificate:
      return "certificate not verified";
    case HubErrorKind::kUnauthorized:
      return "unauthorized";
    case HubErrorKind::kForbidden:
      return "forbidden";
    case HubErrorKind::kBadRequest:
      return "bad request";
    case HubErrorKind::kOffline:
      return "offline";
    case HubErrorKind::kInvalidArgument:
      return "invalid argument";
    case HubErrorKind::kShutdown:
      return "shutdown";
    case HubErrorKind::kUnexpectedStatus:
      return "unexpected status";
  }
  return "unexpected status";
}

std::string HubError::ToString() const {
  std::string out(HubErrorKindName(kind));
  if (http_status != 0) {
    out += " (" + std::to_string(http_status);
    if (!error_code.empty()) out += " " + error_code;
    out += ")";
  }
  if (!error_message.empty()) out += ": " + error_message;
  if (!detail.empty()) out += (error_message.empty() ? ": " : "; ") + detail;
  if (!url.empty()) out += " [" + url + "]";
  return out;
}

Error HubError::ToError() const {
  const ErrorCode code =
      kind == HubErrorKind::kProtocol || kind == HubErrorKind::kInvalidFile
          ? ErrorCode::kInvalidInput
          : ErrorCode::kIo;
  return Error{code, ToString()};
}

HubError ErrorFromResponse(const HttpResponse& response, std::string url) {
  HubError error;
  error.http_status = response.status;
  error.error_code = std::string(response.headers.Get("X-Error-Code").value_or(""));
  error.error_message = std::string(response.headers.Get("X-Error-Message").value_or(""));
  error.url = std::move(url);
  const int status = response.status;
  if (error.error_code == "RevisionNotFound") {
    error.kind = HubErrorKind::kRevisionNotFound;
  } else if (error.error_code == "EntryNotFound") {
    error.kind = HubErrorKind::kEntryNotFound;
  } else if (error.error_code == "GatedRepo") {
    error.kind = status == 401 ? HubErrorKind::kGatedAnonymous : HubErrorKind::kGatedNotApproved;
  } else if (error.error_message == "Access to this resource is disabled.") {
    error.kind = HubErrorKind::kDisabled;
  } else if (status == 401 &&
             error.error_message == "Invalid credentials in Authorization header") {
    error.kind = HubErrorKind::kUnauthorized;
  } else if (error.error_code == "RepoNotFound" || status == 401 || status == 404) {
    error.kind = HubErrorKind::kNotFound;
  } else if (status == 429) {
    error.kind = HubErrorKind::kRateLimited;
  } else if (status == 408 || status / 100 == 5) {
    error.kind = HubErrorKind::kTransient;
  } else if (status == 400) {
    error.kind = HubErrorKind::kBadRequest;
  } else if (status == 403) {
    error.kind = HubErrorKind::kForbidden;
  } else if (status == 416) {
    error.kind = HubErrorKind::kProtocol;
    error.detail = "range not satisfiable (Content-Range: " +
                   std::string(response.headers.Get("Content-Range").value_or("absent")) + ")";
  } else {
    error.kind = HubErrorKind::kUnexpectedStatus;
  }
  return error;
}

HubError ErrorFromTransport(const TransportError& transport, std::string url) {
  HubError error;
  switch (transport.kind) {
    case TransportErrorKind::kTruncated:
    case TransportErrorKind::kProtocol:
      error.kind = HubErrorKind::kProtocol;
      break;
    case TransportErrorKind::kShutdown:
      error.kind = HubErrorKind::kShutdown;
      break;
    case TransportErrorKind::kCertificate:
      error.kind = HubErrorKind::kCertificate;
      break;
    default:
      error.kind = HubErrorKind::kTransient;
  }
  error.detail =
      transport.kind == TransportErrorKind::kCertificate
          ? "the server's TLS certificate could not be verified (" + transport.message + ")"
          : std::string(TransportErrorKindName(transport.kind)) + ": " + transport.message;
  error.url = std::move(url);
  return error;
}

HubError InvalidFileError(std::string detail, std::string url) {
  HubError error;
  error.kind = HubErrorKind::kInvalidFile;
  error.detail = std::move(detail);
  error.url = std::move(url);
  return error;
}

HubError ProtocolError(std::string detail, std::string url, int http_status) {
  HubError error;
  error.kind = HubErrorKind::kProtocol;
  error.detail = std::move(detail);
  error.url = std::move(url);
  error.http_status = http_status;
  return error;
}

}  // namespace hubwatch::hub
