// "Paste a model instead": GET /plan (the form) and POST /plan (an HTML form post,
// application/x-www-form-urlencoded: config, seq, batch, lora_rank, cards, and the assumptions
// train.optimizer, train.checkpointing, runtime.metric; config holds what
// POST /api/v1/plan's body may: plan_body.h). The answer is the
// model page's sections for the posted config, without the upstream history; a config the
// estimator refuses answers 400 with its reason next to the form, the text kept. The config is
// held to POST /api/v1/plan's body limit and every other field to kMaxKnobBytes before any work,
// and what the page shows back of them is bounded by construction (BoundEcho): the reply is at
// most the empty form, the config, kMaxEchoGrowth, the 8 fields escaped and the clipped reason.

#include <algorithm>
#include <utility>

#include "daemon/api/api_context.h"
#include "daemon/api/page_reply.h"
#include "daemon/api/plan_body.h"
#include "daemon/api/query_params.h"
#include "daemon/page/escape.h"
#include "daemon/page/href.h"
#include "daemon/page/model_page.h"
#include "daemon/page/render.h"
#include "estimator/base/text.h"

namespace hubwatch::api {
namespace {

// seq, batch, lora_rank, cards, the assumptions: a number, a name or a list of at most
// kMaxCardEntries ids; 1 KiB holds any of them.
constexpr size_t kMaxKnobBytes = 1024;

// HTML writes some bytes longer (`"` as &quot;, `&` as &amp;, an invalid byte as U+FFFD, a bidi
// control as "\u202e": escape.h), up to 6 for 1: 1 MiB of `&` pasted as the config came back as
// 5 MiB. The config is shown again only when escaping makes it at most this much longer (any
// real config.json: its quotes); the estimator's reason is clipped to kMaxErrorBytes.
constexpr size_t kMaxEchoGrowth = 64 << 10;
constexpr size_t kMaxErrorBytes = 2048;

// How much longer `text` is once escaped for the page, counted a chunk at a time (no copy of
// the whole text), or some count over `limit` once it is past it.
size_t EscapedGrowth(std::string_view text, size_t limit) {
  constexpr size_t kChunk = 4096;
  size_t growth = 0;
  std::string escaped;
  while (!text.empty() && growth <= limit) {
    size_t n = std::min(kChunk, text.size());
    // At a character boundary, so that no valid character is counted as invalid bytes.
    auto continuation = [&](size_t at) {
      return (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
    };
    for (int i = 0; i < 3 && n < text.size() && continuation(n); ++i) --n;
    escaped.clear();
    page::AppendHtml(escaped, text.substr(0, n));
    growth += escaped.size() > n ? escaped.size() - n : 0;
    text.remove_prefix(n);
  }
  return growth;
}

// The form as the page may show it back: the reason clipped, the config left out (the reason
// says so) when escaping would make it more than kMaxEchoGrowth longer.
void BoundEcho(page::PlanForm& form) {
  if (form.error.size() > kMaxErrorBytes) form.error = Clip(form.error, kMaxErrorBytes);
  if (EscapedGrowth(form.config, kMaxEchoGrowth) <= kMaxEchoGrowth) return;
  if (!form.error.empty()) {  // else an estimate, with the form to paste another model below
    form.error += " (the config posted, " + Grouped(form.config.size()) +
                  " bytes, is not shown again: written out for this page it would be more than " +
                  std::to_string(kMaxEchoGrowth >> 10) + " KiB longer)";
  }
  form.config.clear();
}

HttpReply FormPage(const HttpRequest& request, int status, page::PlanForm form,
                   const Estimate* estimate, const std::string& base_url) {
  BoundEcho(form);
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
    return respond(FormPage(request, 400, std::move(form), nullptr, base_url));
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
    return respond(FormPage(request, 413, std::move(form), nullptr, base_url));
  }
  if (form.config.size() > ctx.config.max_plan_body_bytes) {
    form.error = "the config.json is " + std::to_string(form.config.size()) + " bytes; at most " +
                 std::to_string(ctx.config.max_plan_body_bytes) + " are read";
    form.config.resize(4096);
    return respond(FormPage(request, 413, std::move(form), nullptr, base_url));
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
    return respond(FormPage(request, 400, std::move(form), nullptr, base_url));
  }
  if (form.config.find_first_not_of(" \t\r\n") == std::string::npos) {
    form.error = "paste a config.json or a safetensors header first";
    return respond(FormPage(request, 400, std::move(form), nullptr, base_url));
  }
  Result<Estimate> estimate = EstimatePlanBody(form.config, std::move(input).value());
  if (!estimate.ok()) {
    form.error = estimate.error().message;
    return respond(FormPage(request, 400, std::move(form), nullptr, base_url));
  }
  respond(FormPage(request, 200, std::move(form), &*estimate, base_url));
}

}  // namespace

void RegisterPagePlanRoutes(Router& router, const ApiContext& ctx) {
  const ApiContext* c = &ctx;
  router.Add({"GET", "/plan", [c](const HttpRequest& q, const PathParams&, Respond r) {
                page::PlanForm form;
                form.action = "/plan";
                r(FormPage(q, 200, std::move(form), nullptr, BaseUrl(*c, q)));
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
