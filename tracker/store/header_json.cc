// The stored form of a safetensors header.

#include "tracker/store/header_json.h"

#include <cstdint>

#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

// An int64 shape dimension as HeaderToJson wrote it: a non-negative integer.
bool ReadDimension(const nlohmann::json& v, int64_t& out) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
    out = static_cast<int64_t>(v.get<uint64_t>());
    return true;
  }
  return false;  // negative or not an integer: HeaderToJson never writes one
}

}  // namespace

nlohmann::json HeaderToJson(const SafetensorsHeader& h) {
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto& [name, t] : h.tensors) {
    tensors[name] = {t.dtype, t.shape, t.data_begin, t.data_end};
  }
  return {{"tensors", std::move(tensors)}, {"metadata", h.metadata}, {"data_size", h.data_size}};
}

Result<SafetensorsHeader> HeaderFromJson(const std::string& text, const std::string& what) {
  Result<nlohmann::json> doc = StoredJson(text, what);
  if (!doc.ok()) return doc.error();
  auto damaged = [&](const std::string& why) {
    return Error::Io("store: " + what + " is damaged: " + why);
  };
  const nlohmann::json& j = *doc;
  const auto tensors = j.is_object() ? j.find("tensors") : j.end();
  if (tensors == j.end() || !tensors->is_object()) return damaged("no \"tensors\" object");
  SafetensorsHeader h;
  for (auto it = tensors->begin(); it != tensors->end(); ++it) {
    const nlohmann::json& v = *it;
    SafetensorsTensor t;
    if (!v.is_array() || v.size() != 4 || !v[0].is_string() || !v[1].is_array() ||
        !v[2].is_number_unsigned() || !v[3].is_number_unsigned()) {
      return damaged("a tensor is not [dtype, shape, begin, end]");
    }
    t.dtype = v[0].get<std::string>();
    for (const nlohmann::json& d : v[1]) {
      int64_t dim = 0;
      if (!ReadDimension(d, dim) ||
          __builtin_mul_overflow(t.elements, static_cast<uint64_t>(dim), &t.elements)) {
        return damaged("a tensor shape is not a list of sizes");
      }
      t.shape.push_back(dim);
    }
    t.data_begin = v[2].get<uint64_t>();
    t.data_end = v[3].get<uint64_t>();
    h.tensors.emplace(it.key(), std::move(t));
  }
  if (const auto metadata = j.find("metadata"); metadata != j.end()) {
    if (!metadata->is_object()) return damaged("\"metadata\" is not an object");
    for (auto it = metadata->begin(); it != metadata->end(); ++it) {
      if (!it->is_string()) return damaged("\"metadata\" holds a value that is not a string");
      h.metadata.emplace(it.key(), it->get<std::string>());
    }
  }
  if (const auto size = j.find("data_size"); size != j.end()) {
    if (!size->is_number_unsigned()) return damaged("\"data_size\" is not a size");
    h.data_size = size->get<uint64_t>();
  }
  return h;
}

}  // namespace hubwatch::store
