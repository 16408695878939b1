#pragma once

// ApiClient: the query commands' way to ask a running `hubwatch serve` (--api URL) instead of
// opening its store: GET requests to its HTTP API on one kept-alive connection, JSON back. An
// operator of the packaged service needs neither root nor the store's files, and leaves no WAL
// files behind.
//
// Thread safety: one thread per client. Errors: InvalidInput for a URL that is not http(s)://
// host[:port] and for the API's 4xx (its "error" message), Io for the transport and 5xx.

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "estimator/base/result.h"

namespace hubwatch::cli {

class ApiClient {
 public:
  // `base_url`: "http://127.0.0.1:8437" (a trailing '/' is dropped); nothing is sent yet.
  static Result<std::unique_ptr<ApiClient>> Open(const std::string& base_url);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // GET base_url + `target` ("/api/v1/..."; the caller escapes the query): the JSON object of a
  // 200 reply, at most 64 MiB, within 30 s.
  Result<nlohmann::json> Get(const std::string& target);
  // As Get, but a 404 is no error: nullopt (a repo the server does not track).
  Result<std::optional<nlohmann::json>> GetIfFound(const std::string& target);
  // POST `body` as JSON to base_url + `target`; the reply as Get's.
  Result<nlohmann::json> Post(const std::string& target, const nlohmann::json& body);

 private:
  struct Reply {
    long status = 0;
    nlohmann::json body;  // discarded when the reply is not JSON
  };
  explicit ApiClient(std::string base_url);
  // One request: GET, or POST of `post_body` when given. Errors: transport and size only.
  Result<Reply> Perform(const std::string& target, const std::string* post_body);
  // A reply's JSON object when the status is 200, else the API's error.
  Result<nlohmann::json> Accept(const std::string& target, Reply reply) const;
  std::string base_url_;
  void* curl_ = nullptr;  // CURL*
};

// `text` escaped for a URL's query or path segment (RFC 3986 unreserved characters kept; '/'
// kept when `keep_slash`: repo ids are two path segments).
std::string UrlEscape(const std::string& text, bool keep_slash = false);

}  // namespace hubwatch::cli
