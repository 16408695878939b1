// POST /api/v1/plan: the estimator over HTTP. The body (at most max_plan_body_bytes) is a model's
// config.json, a checkpoint's safetensors header, or both (plan_body.h); the query sets the
// workload like `hubwatch estimate`'s flags:
//   ?seq=2048&batch=1&context=4096&lora_rank=16&cards=a100-80gb,h100&preset=hubwatch
// and any assumption by its name, like --set (a name with a dot):
//   &train.optimizer=adamw_8bit&train.checkpointing=full&runtime.metric=allocated
// The answer is the estimate JSON (hubwatch.estimate/1, schema/estimate.schema.json).
// GET /api/v1/cards: the cards `cards=` (here, on .../estimate and the /plan form) and `--cards`
// take, with the figures the fit and cost tables assume for each.

#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/plan_body.h"
#include "daemon/api/query_params.h"
#include "estimator/estimate.h"
#include "estimator/report.h"

namespace hubwatch::api {
namespace {

constexpr int64_t kMaxTokens = int64_t{1} << 24;
constexpr int64_t kMaxBatch = 1 << 16;
constexpr int64_t kMaxRank = 1 << 16;

}  // namespace

Result<EstimateInput> PlanInputFromQuery(const QueryParams& query) {
  Result<Assumptions> assumptions = PresetAssumptions(query.Get("preset").value_or("hubwatch"));
  if (!assumptions.ok()) return assumptions.error();
  EstimateInput input;
  input.assumptions = *assumptions;
  struct Knob {
    const char* name;
    int64_t max;
    int64_t* out;
  };
  const Knob knobs[] = {{"seq", kMaxTokens, &input.workload.seq},
                        {"batch", kMaxBatch, &input.workload.batch},
                        {"context", kMaxTokens, &input.workload.context},
                        {"serving_batch", kMaxBatch, &input.workload.serving_batch},
                        {"lora_rank", kMaxRank, &input.assumptions.lora_rank}};
  for (const Knob& k : knobs) {
    Result<std::optional<int64_t>> v = query.Int(k.name, 1, k.max);
    if (!v.ok()) return v.error();
    if (v->has_value()) *k.out = **v;
  }
  for (const auto& [name, value] : query.items()) {
    if (name.find('.') == std::string::npos) continue;
    if (Status s = SetAssumption(input.assumptions, name, value); !s.ok()) return s.error();
  }
  Result<std::vector<Card>> cards = ParseCards(query.Get("cards").value_or(""));
  if (!cards.ok()) return cards.error();
  input.cards = std::move(cards).value();
  return input;
}

namespace {

void Plan(const HttpRequest& request, Respond respond) {
  Result<QueryParams> query = QueryParams::Parse(request.query);
  if (!query.ok()) return respond(BadRequest(query.error().message));
  Result<EstimateInput> input = PlanInputFromQuery(*query);
  if (!input.ok()) return respond(BadRequest(input.error().message));
  Result<Estimate> estimate = EstimatePlanBody(request.body, std::move(input).value());
  if (!estimate.ok()) {
    // Well-formed but not modelled (an unknown architecture): 422; broken input: 400.
    const int status = estimate.error().code == ErrorCode::kInvalidInput ? 400 : 422;
    return respond(HttpReply::Error(status, estimate.error().message));
  }
  size_t size = 0;
  std::optional<std::string> text =
      DumpJsonWithin(EstimateToJson(*estimate), kMaxEstimateBytes, &size);
  if (!text) {
    HttpReply too_large =
        HttpReply::TooLarge("the estimate of this config", size, kMaxEstimateBytes);
    too_large.status = 422;
    return respond(std::move(too_large));
  }
  HttpReply reply;
  reply.body = std::move(*text);
  respond(std::move(reply));
}

void Cards(Respond respond) {
  nlohmann::json cards = nlohmann::json::array();
  for (const Card& c : KnownCards()) {
    cards.push_back({{"id", c.id},
                     {"name", c.name},
                     {"memory_gb", c.memory_gb},
                     {"bf16_tflops", c.bf16_tflops},
                     {"usd_per_hour", c.usd_per_hour}});
  }
  HttpReply reply;
  reply.body = nlohmann::json{{"cards", std::move(cards)},
                              {"custom", "id=MEMORY_GB:TFLOPS:USD_PER_HOUR"},
                              {"max_cards", kMaxCards}}
                   .dump();
  respond(std::move(reply));
}

}  // namespace

void RegisterPlanRoute(Router& router, const ApiContext& ctx) {
  router.Add({"GET", "/api/v1/cards",
              [](const HttpRequest&, const PathParams&, Respond respond) {
                Cards(std::move(respond));
              }});
  router.Add({.method = "POST",
              .pattern = "/api/v1/plan",
              .handler = [](const HttpRequest& request, const PathParams&,
                            Respond respond) { Plan(request, std::move(respond)); },
              .max_body_bytes = ctx.config.max_plan_body_bytes,
              .heavy = true});
}

}  // namespace hubwatch::api
