#pragma once

// GgufWriter: builds GGUF files (version 3, little-endian) for the GGUF metadata tests and the
// fuzz target's seeds: key-value pairs in the order they are added, no tensors.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::testing {

class GgufWriter {
 public:
  GgufWriter& String(std::string_view key, std::string_view value) {
    Key(key, 8);
    Str(value);
    ++count_;
    return *this;
  }
  GgufWriter& U32(std::string_view key, uint32_t value) {
    Key(key, 4);
    Le(value, 4);
    ++count_;
    return *this;
  }
  GgufWriter& Bool(std::string_view key, bool value) {
    Key(key, 7);
    body_.push_back(value ? 1 : 0);
    ++count_;
    return *this;
  }
  GgufWriter& Strings(std::string_view key, const std::vector<std::string>& values) {
    Key(key, 9);
    Le(8, 4);
    Le(values.size(), 8);
    for (const std::string& v : values) Str(v);
    ++count_;
    return *this;
  }
  GgufWriter& I32s(std::string_view key, const std::vector<int32_t>& values) {
    Key(key, 9);
    Le(5, 4);
    Le(values.size(), 8);
    for (int32_t v : values) Le(static_cast<uint32_t>(v), 4);
    ++count_;
    return *this;
  }
  // Appends raw bytes to the key-value section (for damaged files); counts as `pairs` pairs.
  GgufWriter& Raw(std::string_view bytes, uint64_t pairs = 0) {
    body_.append(bytes);
    count_ += pairs;
    return *this;
  }

  std::string Build(uint32_t version = 3) const {
    std::string out = "GGUF";
    Append(out, version, 4);
    Append(out, 0, 8);  // tensors
    Append(out, count_, 8);
    return out + body_;
  }

  static void Append(std::string& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }

 private:
  void Le(uint64_t v, int bytes) { Append(body_, v, bytes); }
  void Str(std::string_view s) {
    Le(s.size(), 8);
    body_.append(s);
  }
  void Key(std::string_view key, uint32_t type) {
    Str(key);
    Le(type, 4);
  }

  std::string body_;
  uint64_t count_ = 0;
};

}  // namespace hubwatch::testing
