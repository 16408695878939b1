#include "estimator/checkpoint_tensors.h"

#include <algorithm>

#include "estimator/format.h"

namespace hubwatch::checkpoint {
namespace {

// Module names under which transformers implementations number their layers.
constexpr std::string_view kStackNames[] = {"layers", "layer", "h", "blocks", "block"};

// Tensor names (last component) that hold quantization metadata: stored, not parameters.
constexpr std::string_view kQuantMetadata[] = {"qzeros",
                                               "scales",
                                               "g_idx",
                                               "SCB",
                                               "absmax",
                                               "quant_map",
                                               "nested_absmax",
                                               "nested_quant_map",
                                               "weight_format",
                                               "weight_scale",
                                               "weight_scale_inv",
                                               "input_scale",
                                               "output_scale",
                                               "k_scale",
                                               "v_scale",
                                               "weight_zero_point"};

bool IsNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string_view> Split(std::string_view name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

std::string Join(const std::vector<std::string_view>& parts, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out += '.';
    out += parts[i];
  }
  return out;
}

std::string_view Leaf(std::string_view name) {
  const size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// What the config.json around the checkpoint says, each key read alone: an invalid value is a
// note, not an error (the tensors stand on their own).

}  // namespace

NameParts ParseName(std::string_view name) {
  const std::vector<std::string_view> parts = Split(name);
  NameParts out;
  for (size_t k = 1; k + 1 < parts.size(); ++k) {
    if (!IsNumber(parts[k]) || parts[k].size() > 6) continue;
    if (std::find(std::begin(kStackNames), std::end(kStackNames), parts[k - 1]) ==
        std::end(kStackNames)) {
      continue;
    }
    out.stack = Join(parts, 0, k);
    out.layer = std::stoll(std::string(parts[k]));
    std::vector<std::string_view> rest(parts.begin() + static_cast<std::ptrdiff_t>(k) + 1,
                                       parts.end());
    for (size_t j = 1; j + 1 < rest.size(); ++j) {
      if (rest[j - 1] == "experts" && IsNumber(rest[j]) && rest[j].size() <= 6) {
        out.expert = std::stoll(std::string(rest[j]));
        rest[j] = "{e}";
        break;
      }
    }
    out.rest = Join(rest, 0, rest.size());
    return out;
  }
  out.rest = std::string(name);
  return out;
}

bool IsFloat(std::string_view dtype) {
  return dtype == "F64" || dtype == "F32" || dtype == "F16" || dtype == "BF16" ||
         dtype.rfind("F8_", 0) == 0;
}

TensorSpec Spec(const std::string& spec_name, std::string_view full_name,
                const SafetensorsTensor& t, const std::set<std::string_view>& all_names,
                const Quantization& q, Findings& found) {
  TensorSpec s;
  s.name = spec_name;
  s.dtype = t.dtype;
  s.shape = {};
  if (t.shape.size() <= TensorShape::kMaxRank) {
    TensorShape shape;
    switch (t.shape.size()) {
      case 0:
        shape = {};
        break;
      case 1:
        shape = {t.shape[0]};
        break;
      case 2:
        shape = {t.shape[0], t.shape[1]};
        break;
      case 3:
        shape = {t.shape[0], t.shape[1], t.shape[2]};
        break;
      case 4:
        shape = {t.shape[0], t.shape[1], t.shape[2], t.shape[3]};
        break;
      default:
        shape = {t.shape[0], t.shape[1], t.shape[2], t.shape[3], t.shape[4]};
        break;
    }
    s.shape = shape;
  } else {
    s.shape = {static_cast<int64_t>(t.elements)};  // counted the same; the rank is not kept
  }
  const std::string_view leaf = Leaf(full_name);
  const std::string name(full_name);
  if (leaf == "inv_freq" || leaf == "position_ids" || leaf == "masked_bias" ||
      leaf == "_float_tensor" || leaf.ends_with("token_type_ids") ||
      (leaf == "bias" && t.shape.size() == 4 && t.shape[0] == 1 && t.shape[1] == 1)) {
    s.role = TensorRole::kBuffer;
    return s;
  }
  if (std::find(std::begin(kQuantMetadata), std::end(kQuantMetadata), leaf) !=
          std::end(kQuantMetadata) ||
      name.find(".quant_state.") != std::string::npos ||
      (leaf.ends_with("_scales") && t.dtype == "U8")) {
    s.role = TensorRole::kExtraOnDisk;
    found.extra = true;
    return s;
  }
  if (leaf == "qweight" && t.dtype == "I32" && t.shape.size() == 2) {
    s.packing = 32 / q.bits;
    const bool awq = q.method == "awq";
    s.linear_in = awq ? t.shape[0] : t.shape[0] * s.packing;
    s.linear_out = awq ? t.shape[1] * s.packing : t.shape[1];
    found.packed_int = true;
    return s;
  }
  if (t.dtype == "U8" && leaf.ends_with("_blocks") && t.shape.size() >= 3 && t.shape.back() == 16) {
    s.packing = 2;  // MXFP4: two 4-bit values a byte, 32 a block
    found.mxfp4 = true;
    return s;
  }
  if (t.dtype == "U8" && (all_names.count(name + ".quant_state.bitsandbytes__nf4") ||
                          all_names.count(name + ".quant_state.bitsandbytes__fp4"))) {
    s.packing = 2;  // a flattened [n/2, 1]: the linear's shape is in its quant_state
    found.packed_nf4 = true;
    return s;
  }
  if (leaf == "weight" && t.shape.size() == 2 && (IsFloat(t.dtype) || t.dtype == "I8")) {
    s.linear_out = t.shape[0];
    s.linear_in = t.shape[1];
  }
  return s;
}

Place PlaceOf(std::string_view name, const SafetensorsTensor& t) {
  if (t.shape.size() != 2) return Place::kOther;
  const std::string_view leaf = Leaf(name);
  if (leaf != "weight") return Place::kOther;
  const std::string_view module = name.substr(0, name.size() - leaf.size() - 1);
  const std::string_view last = Leaf(module);
  if (module == "lm_head" || module == "embed_out" || module == "output" ||
      module.ends_with(".lm_head")) {
    return Place::kHead;
  }
  if (last.find("position") != std::string_view::npos || last == "wpe") {
    return Place::kPositionEmbedding;
  }
  if (last.find("embed") != std::string_view::npos || last == "wte") return Place::kEmbedding;
  return Place::kOther;
}

std::vector<std::string> FindingNotes(const Findings& found, const Quantization& q) {
  std::vector<std::string> notes;
  if (found.packed_int) {
    notes.push_back("GPTQ/AWQ int32 qweight unpacked at " + std::to_string(q.bits) +
                    " bits (quantization_config.bits" + (q.method.empty() ? "" : ", " + q.method) +
                    "): parameters = stored elements x " + std::to_string(32 / q.bits));
  }
  if (found.packed_nf4) {
    notes.push_back(
        "bitsandbytes 4-bit weights: two parameters a stored byte; their shapes are in the "
        "quant_state, which a header does not show, so LoRA does not count them");
  }
  if (found.mxfp4) {
    notes.push_back(
        "MXFP4 blocks: two parameters a stored byte; their scales are stored, not parameters");
  }
  if (found.extra) {
    notes.push_back(
        "quantization metadata (scales, zeros, absmax) stored, not counted as parameters");
  }
  return notes;
}

}  // namespace hubwatch::checkpoint
