#include "estimator/formats/safetensors_header.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "estimator/base/json_nesting.h"
#include "estimator/base/text.h"
#include "estimator/formats/safetensors_json.h"

namespace hubwatch {
namespace {

struct DtypeBits {
  std::string_view name;
  int bits;
};

constexpr DtypeBits kDtypes[] = {
    {"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
    {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
    {"F32", 32}, {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64},
};

Error Bad(std::string_view what) {
  return Error::InvalidInput("safetensors header: " + std::string(what));
}

Error BadTensor(const std::string& name, std::string_view what) {
  return Bad("tensor '" + Clip(name) + "': " + std::string(what));
}

bool IsNonNegativeInteger(const nlohmann::json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

Result<SafetensorsTensor> ParseEntry(const std::string& name, const nlohmann::json& entry) {
  if (!entry.is_object()) return BadTensor(name, "entry is not an object");
  auto dtype_it = entry.find("dtype");
  auto shape_it = entry.find("shape");
  auto offsets_it = entry.find("data_offsets");
  if (dtype_it == entry.end() || !dtype_it->is_string()) {
    return BadTensor(name, "missing string \"dtype\"");
  }
  if (shape_it == entry.end() || !shape_it->is_array()) {
    return BadTensor(name, "missing array \"shape\"");
  }
  if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2) {
    return BadTensor(name, "\"data_offsets\" must be [begin, end]");
  }

  SafetensorsTensor tensor;
  tensor.dtype = dtype_it->get<std::string>();
  std::optional<int> bits = SafetensorsDtypeBits(tensor.dtype);
  if (!bits) return BadTensor(name, "unknown dtype \"" + Clip(tensor.dtype) + "\"");

  for (const nlohmann::json& dim : *shape_it) {
    if (!IsNonNegativeInteger(dim)) return BadTensor(name, "shape holds a non-integer or negative");
    const uint64_t d = dim.get<uint64_t>();
    if (d > static_cast<uint64_t>(INT64_MAX) ||
        __builtin_mul_overflow(tensor.elements, d, &tensor.elements)) {
      return BadTensor(name, "shape is too large");
    }
    tensor.shape.push_back(static_cast<int64_t>(d));
  }
  const nlohmann::json& begin = (*offsets_it)[0];
  const nlohmann::json& end = (*offsets_it)[1];
  if (!IsNonNegativeInteger(begin) || !IsNonNegativeInteger(end)) {
    return BadTensor(name, "data_offsets must be non-negative integers");
  }
  tensor.data_begin = begin.get<uint64_t>();
  tensor.data_end = end.get<uint64_t>();
  if (tensor.data_end < tensor.data_begin) return BadTensor(name, "data_offsets end before begin");

  uint64_t total_bits = 0;
  if (__builtin_mul_overflow(tensor.elements, static_cast<uint64_t>(*bits), &total_bits)) {
    return BadTensor(name, "shape is too large");
  }
  if (total_bits % 8 != 0) return BadTensor(name, "sub-byte dtype does not fill whole bytes");
  if (tensor.data_end - tensor.data_begin != total_bits / 8) {
    return BadTensor(name, "data_offsets span " +
                               std::to_string(tensor.data_end - tensor.data_begin) +
                               " bytes but dtype and shape need " + std::to_string(total_bits / 8));
  }
  return tensor;
}

}  // namespace

std::optional<int> SafetensorsDtypeBits(std::string_view dtype) {
  for (const DtypeBits& d : kDtypes) {
    if (d.name == dtype) return d.bits;
  }
  return std::nullopt;
}

Result<uint64_t> ReadSafetensorsHeaderLength(std::string_view prefix, uint64_t max_header_bytes) {
  if (prefix.size() < 8) return Bad("file shorter than the 8-byte length prefix");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) {
    length = (length << 8) | static_cast<unsigned char>(prefix[static_cast<size_t>(i)]);
  }
  const uint64_t limit = std::min(max_header_bytes, kHardMaxSafetensorsHeaderBytes);
  if (length > limit) {
    return Bad("declared header length " + std::to_string(length) + " bytes exceeds the limit of " +
               std::to_string(limit));
  }
  if (length < 2) return Bad("declared header length " + std::to_string(length) + " is too short");
  return length;
}

Result<SafetensorsHeader> SafetensorsHeaderFromJson(const nlohmann::json& root) {
  if (!root.is_object()) return Bad("header is not a JSON object");
  if (root.size() > kMaxSafetensorsTensors + 1) {  // one more member than the cap: __metadata__
    return Bad("holds more than " + std::to_string(kMaxSafetensorsTensors) +
               " tensors, more than any released checkpoint");
  }

  SafetensorsHeader header;
  std::vector<std::pair<uint64_t, const std::string*>> by_offset;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) return Bad("__metadata__ is not an object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string())
          return Bad("__metadata__ value for '" + Clip(m.key()) + "' is not a string");
        header.metadata.emplace(m.key(), m->get<std::string>());
      }
      continue;
    }
    Result<SafetensorsTensor> tensor = ParseEntry(it.key(), *it);
    if (!tensor.ok()) return tensor.error();
    auto [pos, inserted] = header.tensors.emplace(it.key(), std::move(tensor).value());
    by_offset.emplace_back(pos->second.data_begin, &pos->first);
  }

  // Sort by (begin, end) so zero-length tensors sharing an offset order deterministically.
  std::sort(by_offset.begin(), by_offset.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return header.tensors.at(*a.second).data_end < header.tensors.at(*b.second).data_end;
  });
  uint64_t expected_begin = 0;
  for (const auto& [begin, name] : by_offset) {
    const SafetensorsTensor& t = header.tensors.at(*name);
    if (begin != expected_begin) {
      return BadTensor(*name, "data_offsets begin at " + std::to_string(begin) + ", expected " +
                                  std::to_string(expected_begin) +
                                  (begin > expected_begin ? " (gap)" : " (overlap)"));
    }
    expected_begin = t.data_end;
  }
  header.data_size = expected_begin;

  return header;
}

Result<SafetensorsHeader> ParseSafetensorsHeader(std::string_view header_json,
                                                 std::optional<uint64_t> file_size) {
  if (header_json.empty() || header_json.front() != '{') {
    return Bad("header does not start with '{'");
  }
  if (JsonNestsDeeperThan(header_json)) {
    return Bad("JSON nested deeper than " + std::to_string(kMaxJsonNesting) + " levels");
  }
  // One more member than the cap: __metadata__.
  if (JsonHasMoreTopLevelMembersThan(header_json, kMaxSafetensorsTensors + 1)) {
    return Bad("holds more than " + std::to_string(kMaxSafetensorsTensors) +
               " tensors, more than any released checkpoint");
  }
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(header_json.begin(), header_json.end());
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range: 1e999
    return Bad("invalid JSON: " + EchoSafe(e.what()));
  }
  Result<SafetensorsHeader> header = SafetensorsHeaderFromJson(root);
  if (!header.ok()) return header;
  if (file_size) {
    const uint64_t needed = 8 + header_json.size();
    if (*file_size < needed || *file_size - needed < header->data_size) {
      return Bad("data region of " + std::to_string(header->data_size) +
                 " bytes does not fit in a file of " + std::to_string(*file_size) + " bytes");
    }
  }
  return header;
}

Result<SafetensorsHeader> ParseSafetensorsHeaderOrFilePrefix(std::string_view bytes) {
  size_t start = bytes.find_first_not_of(" \t\r\n");
  if (start != std::string_view::npos && bytes[start] == '{') {
    return ParseSafetensorsHeader(bytes.substr(start));
  }
  Result<uint64_t> length = ReadSafetensorsHeaderLength(bytes, kHardMaxSafetensorsHeaderBytes);
  if (!length.ok()) return length.error();
  if (bytes.size() - 8 < *length) {
    return Bad("file holds " + std::to_string(bytes.size() - 8) + " header bytes but declares " +
               std::to_string(*length));
  }
  return ParseSafetensorsHeader(bytes.substr(8, *length));
}

}  // namespace hubwatch
