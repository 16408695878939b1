#include "daemon/api/router.h"

#include <algorithm>

namespace hubwatch::api {
namespace {

std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path[0] != '/') return out;
  size_t start = 1;
  while (true) {
    const size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool IsPlaceholder(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return std::nullopt;
    out += c;
  }
  return out;
}

void Router::Add(Route route) {
  Compiled c;
  for (std::string_view s : Split(route.pattern)) c.segments.emplace_back(s);
  c.route = std::move(route);
  routes_.push_back(std::move(c));
}

Router::Match Router::Find(std::string_view method, std::string_view path) const {
  Match match;
  const std::vector<std::string_view> segments = Split(path);
  for (const Compiled& c : routes_) {
    if (c.segments.size() != segments.size()) continue;
    PathParams params;
    bool ok = true;
    bool undecodable = false;  // a placeholder's segment that is not valid percent-encoding
    for (size_t i = 0; i < segments.size() && ok; ++i) {
      if (IsPlaceholder(c.segments[i])) {
        std::optional<std::string> v = PercentDecode(segments[i], false);
        if (!v) {
          undecodable = true;
          continue;
        }
        ok = !v->empty();
        if (ok) params.emplace(c.segments[i].substr(1, c.segments[i].size() - 2), std::move(*v));
      } else {
        ok = c.segments[i] == segments[i];
      }
    }
    if (ok && undecodable) match.bad_encoding = true;
    if (!ok || undecodable) continue;
    if (c.route.method == method) {
      match.route = &c.route;
      match.params = std::move(params);
      match.allowed.clear();
      return match;
    }
    if (std::find(match.allowed.begin(), match.allowed.end(), c.route.method) ==
        match.allowed.end()) {
      match.allowed.push_back(c.route.method);
    }
  }
  std::sort(match.allowed.begin(), match.allowed.end());
  return match;
}

void Router::Dispatch(const HttpRequest& request, Respond respond, std::string* route_label) const {
  Match m = Find(request.method, request.path);
  if (m.route) {
    if (route_label) *route_label = m.route->pattern;
    m.route->handler(request, m.params, std::move(respond));
    return;
  }
  if (route_label) *route_label = "unmatched";
  if (m.allowed.empty() && m.bad_encoding) {
    respond(
        HttpReply::Error(400, "bad percent-encoding in the path: " + request.path.substr(0, 200)));
    return;
  }
  if (m.allowed.empty()) {
    respond(HttpReply::Error(
        404, "no such endpoint: " + request.method + " " + request.path.substr(0, 200)));
    return;
  }
  if (std::find(m.allowed.begin(), m.allowed.end(), "GET") != m.allowed.end()) {
    m.allowed.insert(std::upper_bound(m.allowed.begin(), m.allowed.end(), "HEAD"), "HEAD");
  }
  std::string allow;
  for (const std::string& method : m.allowed) allow += (allow.empty() ? "" : ", ") + method;
  HttpReply reply = HttpReply::Error(405, request.method + " is not allowed here; use " + allow);
  reply.headers.emplace_back("Allow", allow);
  respond(std::move(reply));
}

}  // namespace hubwatch::api
