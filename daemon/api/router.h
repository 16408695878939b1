#pragma once

// Router: (method, path pattern) -> handler. Patterns are literal segments and `{name}`
// placeholders that match one non-empty segment, percent-decoded: "/api/v1/repos/{ns}/{name}".
// A path that no pattern matches is 404; one that matches only under other methods is 405 with
// an Allow header (which lists HEAD with GET: the session answers HEAD as GET). The pattern
// doubles as the route's metrics label (bounded cardinality).
//
// Handlers reply through `Respond`, exactly once, on the network thread: at once for reads, or
// later (after a write on the store thread) for admin requests.
//
// Thread safety: Add() before serving; Find() and the handlers on the network thread only.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/api/http_message.h"

namespace hubwatch::api {

using PathParams = std::map<std::string, std::string, std::less<>>;
using Respond = std::function<void(HttpReply)>;
using Handler = std::function<void(const HttpRequest&, const PathParams&, Respond)>;

struct Route {
  std::string method{};
  std::string pattern{};
  Handler handler{};
  std::optional<uint64_t> max_body_bytes{};  // unset: the server's default limit
  // A read-only handler that may take long (many queries, big lists, the estimator): it runs on
  // the read pool (read_pool.h), off the network thread. It must use only ApiContext::reads()
  // and the context's immutable parts.
  bool heavy = false;
};

class Router {
 public:
  void Add(Route route);

  struct Match {
    const Route* route = nullptr;  // null: no route for this method and path
    PathParams params;
    std::vector<std::string> allowed;  // with route == null: the methods the path has (405)
    // With route == null: a route's literal segments matched, but a placeholder's segment is
    // not valid percent-encoding (or decodes to NUL): the request is bad, not unknown (400).
    bool bad_encoding = false;
  };
  Match Find(std::string_view method, std::string_view path) const;

  // Finds the route and runs it; answers 404, 405 (+ Allow) or 400 (bad percent-encoding)
  // itself. `route_label` receives the pattern, or "unmatched".
  void Dispatch(const HttpRequest& request, Respond respond, std::string* route_label) const;

 private:
  struct Compiled {
    Route route;
    std::vector<std::string> segments;  // "{name}" for placeholders
  };
  std::vector<Compiled> routes_;
};

// Percent-decodes one path segment or query component (`plus_is_space` for queries); nullopt
// on a malformed escape or a decoded NUL.
std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space);

}  // namespace hubwatch::api
