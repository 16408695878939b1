// Operations: GET /metrics (Prometheus text 0.0.4), /healthz (the process answers), /readyz
// (the service is ready: store open, listener bound, scheduler running).

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/service/metrics.h"
#include "daemon/api/service_control.h"

namespace hubwatch::api {

void RegisterServiceRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add({"GET", "/metrics", [c](const HttpRequest&, const PathParams&, Respond respond) {
                HttpReply reply;
                reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
                reply.body = c->metrics->RenderPrometheus();
                respond(std::move(reply));
              }});
  router.Add({"GET", "/healthz", [](const HttpRequest&, const PathParams&, Respond respond) {
                respond(HttpReply::Json(200, {{"status", "ok"}}));
              }});
  router.Add({"GET", "/readyz", [c](const HttpRequest&, const PathParams&, Respond respond) {
                if (!c->control) return respond(HttpReply::Json(200, {{"status", "ready"}}));
                const std::string detail = c->control->status_line();
                if (!c->control->ready()) {
                  return respond(HttpReply::Error(503, "not ready: " + detail));
                }
                respond(HttpReply::Json(200, {{"status", "ready"}, {"detail", detail}}));
              }});
}

}  // namespace hubwatch::api
