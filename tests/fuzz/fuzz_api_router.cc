// libFuzzer target: the HTTP API's request dispatch, through the real route table
// (BuildRouter) over a real store (SQLite in memory, one tracked repo) and real handlers. The
// input is "<method byte><target>\n<body>": the first byte picks the method, the target is
// split at '?' into path and query as the server does. Admin endpoints stay disabled (no admin
// token), so the store is never written and every input is independent.
//
// Invariants: the handler answers exactly once (reads answer at once); the status is a real
// HTTP status; the route label is the matched pattern or "unmatched", and agrees with
// Router::Find; unmatched is 400 (bad percent-encoding where a route would match), 404, or 405
// with an Allow header listing the path's methods; JSON
// replies parse and JSON errors carry {"error": "..."}. QueryParams::Parse accepts any query
// without '%' or NUL, and Int() only returns values in range.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/api/api_context.h"
#include "daemon/api/query_params.h"
#include "daemon/api/router.h"
#include "daemon/service/metrics.h"
#include "daemon/service/store_access.h"
#include "tests/fuzz/fuzz_check.h"
#include "tracker/store/store.h"

namespace {

using hubwatch::api::HttpReply;
using hubwatch::api::HttpRequest;

struct World {
  std::unique_ptr<hubwatch::store::Store> store;
  std::unique_ptr<hubwatch::service::InlineStoreAccess> access;
  hubwatch::service::Metrics metrics;
  hubwatch::ManualClock clock{1733145155};
  hubwatch::api::ApiContext ctx;
  hubwatch::api::Router router;
};

World& TheWorld() {
  static World* world = [] {
    auto* w = new World();
    auto opened = hubwatch::store::Store::Open(":memory:");
    if (!opened.ok()) {
      std::fprintf(stderr, "store: %s\n", opened.error().message.c_str());
      std::abort();
    }
    w->store = std::move(opened).value();
    if (!w->store->repos()
             .AddRepo({.id = "meta-llama/Meta-Llama-3-8B-Instruct",
                       .refs = {"main"},
                       .added_at = 1733145155})
             .ok()) {
      std::abort();
    }
    w->access = std::make_unique<hubwatch::service::InlineStoreAccess>(*w->store);
    w->ctx.store = w->access.get();
    w->ctx.metrics = &w->metrics;
    w->ctx.hub_url = "https://huggingface.co";
    w->ctx.clock = &w->clock;
    w->router = hubwatch::api::BuildRouter(w->ctx);
    return w;
  }();
  return *world;
}

void CheckQuery(std::string_view query) {
  hubwatch::Result<hubwatch::api::QueryParams> params = hubwatch::api::QueryParams::Parse(query);
  if (query.find('%') == std::string_view::npos && query.find('\0') == std::string_view::npos) {
    FUZZ_CHECK(params.ok(), "a query without escapes was refused");
  }
  if (!params.ok()) return;
  for (const char* name : {"limit", "since", "after"}) {
    hubwatch::Result<std::optional<int64_t>> v = params->Int(name, 1, 1000);
    if (v.ok() && v->has_value()) FUZZ_CHECK(**v >= 1 && **v <= 1000, "Int() out of range");
    if (!params->Get(name)) FUZZ_CHECK(v.ok() && !v->has_value(), "absent name not nullopt");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  World& world = TheWorld();
  static constexpr const char* kMethods[] = {"GET", "GET",  "GET",   "POST",    "DELETE",
                                             "PUT", "HEAD", "PATCH", "OPTIONS", "get"};
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t newline = rest.find('\n');
  const std::string_view target = rest.substr(0, newline);

  HttpRequest request;
  request.method = kMethods[data[0] % std::size(kMethods)];
  const size_t q = target.find('?');
  request.path = std::string(target.substr(0, q));
  request.query = q == std::string_view::npos ? "" : std::string(target.substr(q + 1));
  if (newline != std::string_view::npos) request.body = std::string(rest.substr(newline + 1));
  request.headers.emplace_back("host", "127.0.0.1:8437");

  CheckQuery(request.query);
  if (auto decoded = hubwatch::api::PercentDecode(request.path, false)) {
    FUZZ_CHECK(decoded->size() <= request.path.size(), "decoding grew the text");
  }

  int replies = 0;
  HttpReply reply;
  std::string label;
  world.router.Dispatch(
      request,
      [&](HttpReply r) {
        ++replies;
        reply = std::move(r);
      },
      &label);
  FUZZ_CHECK(replies == 1, "the handler did not answer exactly once");
  FUZZ_CHECK(reply.status >= 100 && reply.status <= 599, "not an HTTP status");

  const hubwatch::api::Router::Match match = world.router.Find(request.method, request.path);
  if (match.route) {
    FUZZ_CHECK(label == match.route->pattern, "label is not the matched pattern");
  } else {
    FUZZ_CHECK(label == "unmatched", "unmatched request with a route label");
    if (match.allowed.empty() && match.bad_encoding) {
      FUZZ_CHECK(reply.status == 400, "bad percent-encoding but not 400");
    } else if (match.allowed.empty()) {
      FUZZ_CHECK(reply.status == 404, "no route but not 404");
    } else {
      FUZZ_CHECK(reply.status == 405, "wrong method but not 405");
      bool has_allow = false;
      for (const auto& [name, value] : reply.headers) has_allow |= name == "Allow";
      FUZZ_CHECK(has_allow, "405 without Allow");
    }
  }

  if (!reply.event_stream && reply.content_type.starts_with("application/json")) {
    const nlohmann::json body = nlohmann::json::parse(reply.body, nullptr, false);
    FUZZ_CHECK(!body.is_discarded(), "JSON reply does not parse");
    if (reply.status >= 400) {
      FUZZ_CHECK(body.is_object() && body.contains("error") && body["error"].is_string(),
                 "JSON error reply without {\"error\": ...}");
    }
  }
  return 0;
}
