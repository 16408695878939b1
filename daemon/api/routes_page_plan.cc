// "Paste a model instead": GET /plan (the form) and POST /plan (an HTML form post,
// application/x-www-form-urlencoded: config, seq, batch, lora_rank, cards, and the assumptions
// train.optimizer, train.checkpointing, runtime.metric; config holds what
// POST /api/v1/plan's body may: plan_body.h). The answer is the
// model page's sections for the posted config, without the upstream history; a config the
// estimator refuses answers 400 with its reason next to the form, the text kept. The config is
// held to POST /api/v1/plan's body limit and every other field to kMaxKnobBytes before any work,
// so the page echoes at most max_plan_body_bytes + 8 * kMaxKnobBytes of what was posted.

#include <algorithm>
#include <utility>

#include "daemon/api/api_context.h"
#include "daemon/api/page_reply.h"
#include "daemon/api/plan_body.h"
#include "daemon/api/query_params.h"
#include "daemon/page/href.h"
#include "daemon/page/model_page.h"
#include "daemon/page/render.h"

namespace hubwatch::api {
namespace {

// seq, batch, lora_rank, cards, the assumptions: a number, a name or a list of at most
// kMaxCardEntries ids; 1 KiB holds any of them.
constexpr size_t kMaxKnobBytes = 1024;

HttpReply FormPage(const HttpRequest& request, int status, const page::PlanForm& form,
                   const Estimate* estimate, const std::string& base_url) {
  return PageReply(request, status, "text/html; charset=utf-8",
                   page::RenderHtml(page::BuildPlanPage(form, estimate, base_url)), "");
}

void PostPlan(const ApiContext& ctx, const HttpRequest& request, Respond respond) {
  const std::string base_url = BaseUrl(ctx, request);
  page::PlanForm form;
  form.action = "/plan";
  Result<QueryParams> fields = QueryParams::Parse(request.body);
  if (!fields.ok()) {
    form.error = "the form is not url-encoded: " + fields.error().message;
    return respond(FormPage(request, 400, form, nullptr, base_url));
  }
  form.config = fields->Get("config").value_or("");
  std::string too_long;
  for (const auto& [name, value] :
       {std::pair<const char*, std::string*>{"seq", &form.seq},
        {"batch", &form.batch},
        {"context", &form.context},
        {"lora_rank", &form.lora_rank},
        {"cards", &form.cards},
        {"train.optimizer", &form.optimizer},
        {"train.checkpointing", &form.checkpointing},
        {"runtime.metric", &form.metric}}) {
    *value = fields->Get(name).value_or("");
    if (value->size() > kMaxKnobBytes) {
      too_long = name;
      value->resize(kMaxKnobBytes);  // echoed, cut: it may end mid-character (Html cleans it)
    }
  }
  if (!too_long.empty()) {
    form.error = "the " + too_long + " field is longer than " + std::to_string(kMaxKnobBytes) +
                 " bytes";
    form.config.resize(std::min<size_t>(form.config.size(), 4096));
    return respond(FormPage(request, 413, form, nullptr, base_url));
  }
  if (form.config.size() > ctx.config.max_plan_body_bytes) {
    form.error = "the config.json is " + std::to_string(form.config.size()) + " bytes; at most " +
                 std::to_string(ctx.config.max_plan_body_bytes) + " are read";
    form.config.resize(4096);
    return respond(FormPage(request, 413, form, nullptr, base_url));
  }
  // The knobs as POST /api/v1/plan takes them; an empty field is the default.
  std::string knobs;
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"seq", &form.seq},
                                    {"batch", &form.batch},
                                    {"context", &form.context},
                                    {"lora_rank", &form.lora_rank},
                                    {"cards", &form.cards},
                                    {"train.optimizer", &form.optimizer},
                                    {"train.checkpointing", &form.checkpointing},
                                    {"runtime.metric", &form.metric}}) {
    if (!value->empty())
      knobs += std::string(knobs.empty() ? "" : "&") + name + "=" + page::QueryEscape(*value);
  }
  Result<QueryParams> query = QueryParams::Parse(knobs);
  Result<EstimateInput> input =
      query.ok() ? PlanInputFromQuery(*query) : Result<EstimateInput>(query.error());
  if (!input.ok()) {
    form.error = input.error().message;
    return respond(FormPage(request, 400, form, nullptr, base_url));
  }
  if (form.config.find_first_not_of(" \t\r\n") == std::string::npos) {
    form.error = "paste a config.json or a safetensors header first";
    return respond(FormPage(request, 400, form, nullptr, base_url));
  }
  Result<Estimate> estimate = EstimatePlanBody(form.config, std::move(input).value());
  if (!estimate.ok()) {
    form.error = estimate.error().message;
    return respond(FormPage(request, 400, form, nullptr, base_url));
  }
  respond(FormPage(request, 200, form, &*estimate, base_url));
}

}  // namespace

void RegisterPagePlanRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add({"GET", "/plan", [c](const HttpRequest& q, const PathParams&, Respond r) {
                page::PlanForm form;
                form.action = "/plan";
                r(FormPage(q, 200, form, nullptr, BaseUrl(*c, q)));
              }});
  // The form encodes the config: up to 3 bytes per byte (%XX), plus the other fields.
  router.Add({.method = "POST",
              .pattern = "/plan",
              .handler = [c](const HttpRequest& q, const PathParams&,
                             Respond r) { PostPlan(*c, q, std::move(r)); },
              .max_body_bytes = ctx.config.max_plan_body_bytes * 3 + 4096,
              .heavy = true});
}

}  // namespace hubwatch::api
