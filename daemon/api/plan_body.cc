#include "daemon/api/plan_body.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "estimator/base/json_nesting.h"
#include "estimator/formats/safetensors_json.h"

namespace hubwatch::api {
namespace {

constexpr char kEnvelopeHeaders[] = "safetensors_headers";

// A safetensors header: every member is __metadata__ or a tensor entry with its byte range.
bool LooksLikeHeader(const nlohmann::json& root) {
  if (root.empty()) return false;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    if (!it->is_object() || !it->contains("data_offsets")) return false;
  }
  return true;
}

bool IsEnvelope(const nlohmann::json& root) {
  if (root.contains("model_type") || root.empty()) return false;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() != "config" && it.key() != kEnvelopeHeaders) return false;
  }
  return true;
}

Result<SafetensorsHeader> HeaderAt(const nlohmann::json& header, size_t index) {
  const std::string where = std::string(kEnvelopeHeaders) + "[" + std::to_string(index) + "]";
  if (!header.is_object()) return Error::InvalidInput(where + " is not a safetensors header object");
  Result<SafetensorsHeader> parsed = SafetensorsHeaderFromJson(header);
  if (!parsed.ok()) return Error::InvalidInput(where + ": " + parsed.error().message);
  return parsed;
}

Result<Estimate> FromEnvelope(const nlohmann::json& root, EstimateInput input) {
  nlohmann::json config = nlohmann::json::object();
  if (auto c = root.find("config"); c != root.end()) {
    if (!c->is_object()) return Error::InvalidInput("config is not a config.json object");
    config = *c;
  }
  if (auto h = root.find(kEnvelopeHeaders); h != root.end()) {
    if (!h->is_array()) {
      return Error::InvalidInput(std::string(kEnvelopeHeaders) +
                                 " is not an array of safetensors headers (one per shard)");
    }
    for (size_t i = 0; i < h->size(); ++i) {
      Result<SafetensorsHeader> header = HeaderAt((*h)[i], i);
      if (!header.ok()) return header.error();
      input.headers.push_back(std::move(header).value());
    }
  }
  return EstimateModel(config, input);
}

// The estimate of one header alone: the model is its tensors.
Result<Estimate> FromHeader(Result<SafetensorsHeader> header, EstimateInput input) {
  if (!header.ok()) return header.error();
  input.headers.push_back(std::move(header).value());
  return EstimateModel(nlohmann::json::object(), input);
}

}  // namespace

Result<Estimate> EstimatePlanBody(std::string_view body, EstimateInput input) {
  const size_t start = body.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) {
    return Error::InvalidInput("the body must be a config.json or a safetensors header");
  }
  // Not JSON: the start of a .safetensors file, as `head -c` gives it.
  if (body[start] != '{') {
    return FromHeader(ParseSafetensorsHeaderOrFilePrefix(body), std::move(input));
  }
  if (JsonNestsDeeperThan(body)) {
    return Error::InvalidInput("the body is nested deeper than " +
                               std::to_string(kMaxJsonNesting) + " levels");
  }
  const nlohmann::json root = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  // Not strict JSON (Python's NaN, a syntax error): the config reader says which.
  if (!root.is_object()) return EstimateModelFromText(body, input);
  if (root.contains("weight_map")) {
    return Error::Unsupported(
        "a model.safetensors.index.json names each tensor's shard but not its shape or dtype: "
        "post the shards' safetensors headers instead (the first 8 + N bytes of each "
        ".safetensors file), as {\"config\": ..., \"safetensors_headers\": [...]}");
  }
  if (IsEnvelope(root)) return FromEnvelope(root, std::move(input));
  if (LooksLikeHeader(root)) return FromHeader(SafetensorsHeaderFromJson(root), std::move(input));
  return EstimateModel(root, input);
}

}  // namespace hubwatch::api
