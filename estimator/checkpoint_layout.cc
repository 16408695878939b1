#include "estimator/checkpoint_layout.h"

#include <algorithm>

#include "estimator/checkpoint_graph.h"
#include "estimator/format.h"

namespace hubwatch::checkpoint {
namespace {

using Copies = std::vector<std::pair<int64_t, std::string_view>>;  // (expert, full name)

// Every tensor of the shards by name. Errors: a name in two shards, too many tensors, none.
Status CollectTensors(const std::vector<SafetensorsHeader>& headers,
                      std::map<std::string_view, const SafetensorsTensor*>& stored,
                      std::set<std::string_view>& names) {
  for (const SafetensorsHeader& h : headers) {
    for (const auto& [name, tensor] : h.tensors) {
      if (!stored.emplace(name, &tensor).second) {
        return Error::InvalidInput("safetensors headers: tensor '" + Clip(name) +
                                   "' is stored in two shards");
      }
      if (stored.size() > kMaxCheckpointTensors) {
        return Error::InvalidInput("the checkpoint holds more than " +
                                   Grouped(kMaxCheckpointTensors) + " tensors");
      }
      names.insert(name);
    }
  }
  if (stored.empty()) return Error::InvalidInput("the checkpoint's headers hold no tensor");
  return Status::Ok();
}

// The copies of one templated name as stored entries: experts 0..E-1 with one shape and dtype
// fold into one entry of E copies.
TensorGroup Group(const std::string& rest, Copies copies,
                  const std::map<std::string_view, const SafetensorsTensor*>& stored) {
  std::sort(copies.begin(), copies.end());
  const SafetensorsTensor& first = *stored.at(copies.front().second);
  bool fold = copies.front().first == 0;
  for (size_t e = 0; fold && e < copies.size(); ++e) {
    const SafetensorsTensor& t = *stored.at(copies[e].second);
    fold = copies[e].first == static_cast<int64_t>(e) && t.shape == first.shape &&
           t.dtype == first.dtype;
  }
  TensorGroup group{.rest = rest, .entries = {}};
  if (copies.front().first < 0 || fold) {
    group.entries.push_back({.name = rest,
                             .full_name = copies.front().second,
                             .copies = static_cast<int64_t>(copies.size())});
    return group;
  }
  for (const auto& [e, full] : copies) {
    std::string name = rest;
    name.replace(name.find("{e}"), 3, std::to_string(e));
    group.entries.push_back({.name = std::move(name), .full_name = full, .copies = 1});
  }
  return group;
}

}  // namespace

Result<CheckpointLayout> CheckpointLayout::Read(const std::vector<SafetensorsHeader>& headers) {
  CheckpointLayout layout;
  if (Status s = CollectTensors(headers, layout.stored_, layout.names_); !s.ok()) {
    return s.error();
  }
  layout.Sort();
  return layout;
}

void CheckpointLayout::Sort() {
  std::map<std::pair<std::string, int64_t>, std::map<std::string, Copies>> by_rest;
  for (const auto& [name, t] : stored_) {
    if (IsFloat(t->dtype)) float_elements_[t->dtype] += t->elements;
    NameParts parts = ParseName(name);
    if (parts.layer < 0) {
      unnumbered_[static_cast<size_t>(PlaceOf(name, *t))].push_back(name);
      continue;
    }
    if (std::find(stacks_.begin(), stacks_.end(), parts.stack) == stacks_.end()) {
      stacks_.push_back(parts.stack);
    }
    by_rest[{parts.stack, parts.layer}][parts.rest].emplace_back(parts.expert, name);
  }
  for (auto& [key, groups] : by_rest) {
    std::vector<TensorGroup>& layer = layers_[key];
    for (auto& [rest, copies] : groups) layer.push_back(Group(rest, std::move(copies), stored_));
  }
}

int64_t CheckpointLayout::LoadedBelow(const std::string& stack,
                                      std::optional<int64_t> layer_count) const {
  if (!layer_count) return -1;
  int64_t below = 0;
  for (const auto& [key, layer] : layers_) below += key.first == stack && key.second < *layer_count;
  return below == *layer_count ? *layer_count : -1;
}

std::string CheckpointLayout::MostCommonFloatDtype() const {
  uint64_t most = 0;
  std::string dtype = "BF16";
  for (const auto& [name, n] : float_elements_) {
    if (!n.overflowed() && n.value() > most) {
      most = n.value();
      dtype = std::string(name);
    }
  }
  return dtype;
}

}  // namespace hubwatch::checkpoint
