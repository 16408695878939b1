#include "tests/fakehub/gguf_blob.h"

#include <bit>
#include <charconv>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;

constexpr uint32_t kTypeString = 8;
constexpr uint32_t kTypeArray = 9;
constexpr uint64_t kMaxGeneratedElements = 10'000'000;
constexpr uint64_t kMaxPrefixBytes = 256ull << 20;

struct ValueType {
  const char* name;
  uint32_t id;
  int bytes;  // 0 for string
  bool is_signed;
  bool is_float;
};
constexpr ValueType kValueTypes[] = {
    {"u8", 0, 1, false, false},   {"i8", 1, 1, true, false},    {"u16", 2, 2, false, false},
    {"i16", 3, 2, true, false},   {"u32", 4, 4, false, false},  {"i32", 5, 4, true, false},
    {"f32", 6, 4, false, true},   {"bool", 7, 1, false, false}, {"string", 8, 0, false, false},
    {"u64", 10, 8, false, false}, {"i64", 11, 8, true, false},  {"f64", 12, 8, false, true},
};

const ValueType* FindValueType(std::string_view name) {
  for (const ValueType& t : kValueTypes) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

struct GgmlType {
  uint32_t id;
  const char* name;
  uint64_t block;
  uint64_t block_bytes;
};
constexpr GgmlType kGgmlTypes[] = {
    {0, "F32", 1, 4},       {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},    {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},    {8, "Q8_0", 32, 34},    {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},  {11, "Q3_K", 256, 110}, {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210}, {15, "Q8_K", 256, 292}, {24, "I8", 1, 1},       {25, "I16", 1, 2},
    {26, "I32", 1, 4},      {27, "I64", 1, 8},      {28, "F64", 1, 8},      {30, "BF16", 1, 2},
};

// Where an encoding goes: a std::string, or a Counter that only adds up the bytes (the first
// pass, which checks the manifest and sizes the prefix without building it).
struct Counter {
  uint64_t n = 0;
  void append(const char*, size_t k) { n += k; }
  void append(std::string_view s) { n += s.size(); }
  void append(size_t k, char) { n += k; }
  uint64_t size() const { return n; }
};

template <class Out>
void Le(Out& out, uint64_t v, int bytes) {
  char buf[8];
  for (int i = 0; i < bytes; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out.append(buf, static_cast<size_t>(bytes));
}
template <class Out>
void Str(Out& out, std::string_view s) {
  Le(out, s.size(), 8);
  out.append(s);
}

// Appends one scalar of type `t` from `v`; false when `v` is not a value of that type.
bool PutScalar(std::string& out, const ValueType& t, const json& v) {
  if (t.id == kTypeString) {
    if (!v.is_string()) return false;
    Str(out, v.get_ref<const std::string&>());
  } else if (t.id == 7) {
    if (!v.is_boolean()) return false;
    out.push_back(v.get<bool>() ? 1 : 0);
  } else if (t.is_float) {
    if (!v.is_number()) return false;
    const double d = v.get<double>();
    Le(out,
       t.bytes == 4 ? std::bit_cast<uint32_t>(static_cast<float>(d)) : std::bit_cast<uint64_t>(d),
       t.bytes);
  } else if (t.is_signed) {
    if (!v.is_number_integer()) return false;
    const int64_t i = v.get<int64_t>();
    const int bits = 8 * t.bytes;
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()})
      return false;
    if (bits < 64 && (i < -(int64_t{1} << (bits - 1)) || i >= (int64_t{1} << (bits - 1))))
      return false;
    Le(out, static_cast<uint64_t>(i), t.bytes);
  } else {
    if (!v.is_number_unsigned()) return false;
    const uint64_t u = v.get<uint64_t>();
    if (t.bytes < 8 && u >> (8 * t.bytes) != 0) return false;
    Le(out, u, t.bytes);
  }
  return true;
}

// A filler pattern, "tok{i}", cut at each "{i}": written for index i without building a string.
class Filler {
 public:
  explicit Filler(std::string_view pattern) {
    for (size_t at = 0;;) {
      const size_t next = pattern.find("{i}", at);
      pieces_.push_back(pattern.substr(at, next == std::string_view::npos ? next : next - at));
      fixed_ += pieces_.back().size();
      if (next == std::string_view::npos) break;
      at = next + 3;
    }
  }
  template <class Out>
  void Put(Out& out, uint64_t i) const {
    char digits[24];
    const size_t n =
        static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, i).ptr - digits);
    Le(out, fixed_ + n * (pieces_.size() - 1), 8);
    for (size_t p = 0; p < pieces_.size(); ++p) {
      if (p > 0) out.append(digits, n);
      out.append(pieces_[p]);
    }
  }

 private:
  std::vector<std::string_view> pieces_;
  size_t fixed_ = 0;
};

// The value of one [key, type, value] entry, after its key and type are written. "" = ok.
template <class Out>
std::string PutValue(Out& out, const std::string& type, const json& v) {
  std::string scalar;
  if (const ValueType* t = FindValueType(type)) {
    Le(out, t->id, 4);
    if (!PutScalar(scalar, *t, v)) return "is not a " + type;
    out.append(std::string_view(scalar));
    return "";
  }
  const size_t cut = type.find("_array");
  const ValueType* element =
      cut == std::string::npos ? nullptr : FindValueType(type.substr(0, cut));
  const bool generated = type.substr(cut == std::string::npos ? 0 : cut) == "_array_generated";
  if (!element || (!generated && type.substr(cut) != "_array")) return "unknown type " + type;
  Le(out, kTypeArray, 4);
  Le(out, element->id, 4);
  if (!generated) {
    if (!v.is_array()) return "is not an array";
    Le(out, v.size(), 8);
    for (const json& e : v) {
      if (!PutScalar(scalar, *element, e))
        return "has an element that is not a " + std::string(element->name);
    }
    out.append(std::string_view(scalar));
    return "";
  }
  // {"count": N, "named": {"i": value}, "filler": "tok{i}" (strings) | "fill": value (others),
  //  "ranges": [[begin, end, value], ...] (others; end exclusive)}
  if (!v.is_object() || !v.value("count", json()).is_number_unsigned()) return "needs a count";
  const uint64_t count = v["count"].get<uint64_t>();
  if (count > kMaxGeneratedElements) return "count past " + std::to_string(kMaxGeneratedElements);
  // Every value is encoded once, up front; the loop only appends bytes.
  const bool strings = element->id == kTypeString;
  auto encode = [&](const json& value, std::string* bytes) {
    return PutScalar(*bytes, *element, value);
  };
  std::string fill;
  if (!strings && !encode(v.value("fill", json(uint64_t{0})), &fill))
    return "has a fill that is not a " + std::string(element->name);
  const json filler_json = v.value("filler", json("{i}"));
  if (!filler_json.is_string()) return "has a filler that is not a string";
  const Filler filler(filler_json.get_ref<const std::string&>());
  std::map<uint64_t, std::string> named;
  if (auto it = v.find("named"); it != v.end() && it->is_object()) {
    for (auto e = it->begin(); e != it->end(); ++e) {
      const std::string& key = e.key();
      if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos ||
          key.size() > 18 || std::stoull(key) >= count)
        return "names index \"" + key + "\" outside the array";
      if (named.count(std::stoull(key))) return "names index " + key + " twice";
      if (!encode(*e, &named[std::stoull(key)]))
        return "element " + key + " is not a " + element->name;
    }
  }
  struct Range {
    uint64_t begin, end;
    std::string bytes;
  };
  std::vector<Range> ranges;  // after `named`; the first that holds an index gives its value
  if (auto it = v.find("ranges"); it != v.end()) {
    if (!it->is_array()) return "has ranges that are not an array";
    for (const json& r : *it) {
      Range range;
      if (!r.is_array() || r.size() != 3 || !r[0].is_number_unsigned() ||
          !r[1].is_number_unsigned() || r[1].get<uint64_t>() > count || !encode(r[2], &range.bytes))
        return "has a bad range";
      range.begin = r[0].get<uint64_t>();
      range.end = r[1].get<uint64_t>();
      ranges.push_back(std::move(range));
    }
  }
  Le(out, count, 8);
  auto next_named = named.begin();
  for (uint64_t i = 0; i < count; ++i) {
    const std::string* bytes = nullptr;
    if (next_named != named.end() && next_named->first == i) bytes = &(next_named++)->second;
    for (size_t r = 0; r < ranges.size() && !bytes; ++r) {
      if (i >= ranges[r].begin && i < ranges[r].end) bytes = &ranges[r].bytes;
    }
    if (bytes)
      out.append(std::string_view(*bytes));
    else if (strings)
      filler.Put(out, i);
    else
      out.append(std::string_view(fill));
    if (out.size() > kMaxPrefixBytes) return "makes a header past 256 MiB";
  }
  return "";
}

std::optional<uint32_t> GgmlTypeOf(const json& v) {
  for (const GgmlType& t : kGgmlTypes) {
    if ((v.is_number_unsigned() && v.get<uint64_t>() == t.id) ||
        (v.is_string() && v.get_ref<const std::string&>() == t.name))
      return t.id;
  }
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> GgmlTensorBytes(uint32_t type, uint64_t elements) {
  for (const GgmlType& t : kGgmlTypes) {
    if (t.id == type) {
      if (elements % t.block != 0) return std::nullopt;
      return elements / t.block * t.block_bytes;
    }
  }
  return std::nullopt;
}

namespace {

// The prefix of the file `m` describes: header, key-value pairs, tensor infos, padding. Sets
// `data` to the bytes of the tensor data that follow it. "" = ok, else what is wrong.
template <class Out>
std::string Encode(const json& m, Out& out, uint64_t* data) {
  const json metadata = m.value("metadata", json::array());
  const json tensors = m.value("tensors", json::array());
  if (!metadata.is_array() || !tensors.is_array()) return "metadata and tensors are arrays";
  const json version = m.value("version", json(uint64_t{3}));
  if (version != 2 && version != 3) return "version is 2 or 3";
  out.append("GGUF", 4);
  Le(out, version.get<uint64_t>(), 4);
  Le(out, tensors.size(), 8);
  Le(out, metadata.size(), 8);
  std::set<std::string> keys;
  uint64_t alignment = 32;
  for (const json& kv : metadata) {
    if (!kv.is_array() || kv.size() != 3 || !kv[0].is_string() || !kv[1].is_string())
      return "each metadata entry is [key, type, value]";
    const std::string& key = kv[0].get_ref<const std::string&>();
    if (!keys.insert(key).second) return "duplicate key " + key;
    Str(out, key);
    const std::string why = PutValue(out, kv[1].get<std::string>(), kv[2]);
    if (!why.empty()) return key + " " + why;
    if (key == "general.alignment") {
      alignment = kv[1] == "u32" ? kv[2].get<uint64_t>() : 0;
      if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        return "general.alignment is a u32 power of two";
    }
  }
  *data = 0;
  for (const json& t : tensors) {
    if (!t.is_object() || !t.value("name", json()).is_string() ||
        !t.value("shape", json()).is_array() || t["shape"].empty() || t["shape"].size() > 4)
      return "each tensor needs a name and a shape of 1 to 4 dimensions";
    const std::string& name = t["name"].get_ref<const std::string&>();
    const std::optional<uint32_t> type = GgmlTypeOf(t.value("type", json()));
    if (!type) return name + ": unknown ggml type " + t.value("type", json()).dump();
    Str(out, name);
    Le(out, t["shape"].size(), 4);
    uint64_t elements = 1;
    for (const json& d : t["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() == 0) return name + ": bad shape";
      elements *= d.get<uint64_t>();
      Le(out, d.get<uint64_t>(), 8);
    }
    const std::optional<uint64_t> bytes = GgmlTensorBytes(*type, elements);
    if (!bytes) return name + ": not a whole number of blocks";
    Le(out, *type, 4);
    Le(out, *data, 8);
    *data += (*bytes + alignment - 1) / alignment * alignment;
  }
  out.append((alignment - out.size() % alignment) % alignment, '\0');
  return "";
}

Result<BlobPtr> MakeGgufBlobUncached(std::string_view manifest_json);

}  // namespace

Result<BlobPtr> MakeGgufBlob(std::string_view manifest_json) {
  // Hubs started one after another in a process (a test suite) share the blob of a manifest,
  // and so the prefix built by the first read; immutable, so sharing is safe.
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const FileBlob>, std::less<>> made;
  {
    std::lock_guard lock(mutex);
    std::erase_if(made, [](const auto& entry) { return entry.second.expired(); });
    if (auto it = made.find(manifest_json); it != made.end()) {
      if (BlobPtr shared = it->second.lock()) return shared;
    }
  }
  Result<BlobPtr> blob = MakeGgufBlobUncached(manifest_json);
  if (blob.ok()) {
    std::lock_guard lock(mutex);
    made[std::string(manifest_json)] = *blob;
  }
  return blob;
}

namespace {

Result<BlobPtr> MakeGgufBlobUncached(std::string_view manifest_json) {
  auto bad = [](const std::string& why) { return Error::InvalidInput("gguf manifest: " + why); };
  auto m = std::make_shared<const json>(json::parse(manifest_json, nullptr, false));
  if (!m->is_object()) return bad("not a JSON object");
  const json declared = m->value("size", json());
  const json seed = m->value("seed", json(uint64_t{0}));
  const json sha256 = m->value("sha256", json());
  if (!declared.is_number_unsigned() || !seed.is_number_unsigned() || !sha256.is_string() ||
      !m->value("version", json(uint64_t{3})).is_number_unsigned())
    return bad("needs size, sha256 (a string), seed and version (non-negative integers)");
  // Pass one counts (and checks everything); the bytes are built on the first read.
  Counter counter;
  uint64_t data = 0;
  if (const std::string why = Encode(*m, counter, &data); !why.empty()) return bad(why);
  const uint64_t size = counter.n + data;
  if (declared.get<uint64_t>() != size) {
    return bad("declared size " + std::to_string(declared.get<uint64_t>()) +
               " but the header and tensors make " + std::to_string(size) + " bytes");
  }
  auto prefix = std::make_shared<LazyPrefix>();
  prefix->size = counter.n;
  prefix->build = [m, n = counter.n] {
    std::string out;
    out.reserve(n);
    uint64_t ignored = 0;
    Encode(*m, out, &ignored);  // checked by the counting pass: same bytes, same length
    return out;
  };
  Result<BlobPtr> blob = MakePrefixedLfsBlob(BlobKind::kGguf, std::move(prefix), size,
                                             sha256.get<std::string>(), seed.get<uint64_t>());
  if (!blob.ok()) return bad(blob.error().message);
  return blob;
}

}  // namespace
}  // namespace hubwatch::fakehub
