#include "estimator/formats/gguf_header.h"

#include <set>
#include <utility>
#include <vector>

#include "estimator/base/text.h"

namespace hubwatch {
namespace {

enum GgufType : uint32_t {
  kU8 = 0,
  kI8,
  kU16,
  kI16,
  kU32,
  kI32,
  kF32,
  kBool,
  kString,
  kArray,
  kU64,
  kI64,
  kF64,
};

// Bytes of a fixed-size value type; 0 for string and array (and unknown types).
uint64_t FixedSize(uint32_t type) {
  switch (type) {
    case kU8:
    case kI8:
    case kBool:
      return 1;
    case kU16:
    case kI16:
      return 2;
    case kU32:
    case kI32:
    case kF32:
      return 4;
    case kU64:
    case kI64:
    case kF64:
      return 8;
    default:
      return 0;
  }
}

// Where a scan stands: going on, out of bytes (the prefix ends inside the metadata), or failed.
enum class Step { kOk, kShort, kBad };

class Scanner {
 public:
  explicit Scanner(std::string_view bytes) : bytes_(bytes) {}

  Step Header(GgufMetadata& m);
  Step KeyValue(GgufMetadata& m);
  // The token strings at the special ids, from the tokens array found by KeyValue.
  void SpecialTokenText(GgufMetadata& m);

  uint64_t pos() const { return pos_; }
  uint64_t needed() const { return needed_; }
  const std::string& error() const { return error_; }

 private:
  // False, with needed_ set, when fewer than n bytes are left.
  bool Has(uint64_t n) {
    if (n <= bytes_.size() - pos_) return true;
    needed_ = n > UINT64_MAX - pos_ ? UINT64_MAX : pos_ + n;
    return false;
  }
  uint64_t Le(uint64_t n) {  // REQUIRES: Has(n)
    uint64_t v = 0;
    for (uint64_t i = 0; i < n; ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += n;
    return v;
  }
  Step Unsigned(uint64_t n, uint64_t& out) {
    if (!Has(n)) return Step::kShort;
    out = Le(n);
    return Step::kOk;
  }
  Step Fail(std::string why) {
    error_ = "GGUF: " + (key_.empty() ? "" : "key \"" + EchoSafe(key_) + "\": ") + "byte " +
             std::to_string(pos_) + ": " + std::move(why);
    return Step::kBad;
  }
  // A u64 length (at most `max`) and that many bytes.
  Step String(uint64_t max, std::string_view& out) {
    uint64_t length = 0;
    if (Step s = Unsigned(8, length); s != Step::kOk) return s;
    if (length > max) {
      return Fail("a string of " + std::to_string(length) + " bytes (the limit is " +
                  std::to_string(max) + ")");
    }
    if (!Has(length)) return Step::kShort;
    out = bytes_.substr(pos_, length);
    pos_ += length;
    return Step::kOk;
  }
  Step Value(uint32_t type, GgufMetadata& m);
  Step Array(GgufMetadata& m);
  void Keep(std::string_view value, GgufMetadata& m);
  void KeepInteger(uint32_t type, uint64_t raw, GgufMetadata& m);

  std::string_view bytes_;
  uint64_t pos_ = 0;
  uint64_t needed_ = 0;
  std::string error_;
  std::string key_;  // the key being read
  std::set<std::string, std::less<>> keys_;
  uint64_t tokens_at_ = 0;  // offset of the first element of tokenizer.ggml.tokens (0: none)
};

constexpr std::string_view kTemplatePrefix = "tokenizer.chat_template.";
constexpr std::string_view kTokenIdPrefix = "tokenizer.ggml.";
constexpr std::string_view kTokenIdSuffix = "_token_id";

Step Scanner::Header(GgufMetadata& m) {
  if (!Has(24)) return Step::kShort;
  const std::string_view magic = bytes_.substr(0, 4);
  if (magic == "FUGG") return Fail("a big-endian GGUF file (not supported)");
  if (magic != "GGUF") return Fail("not a GGUF file (the magic is not \"GGUF\")");
  pos_ = 4;
  const uint64_t version = Le(4);
  // A big-endian file's version 2 or 3 reads as 0x02000000 or 0x03000000 here.
  if (version != 0 && (version & 0x00FFFFFF) == 0) {
    return Fail("a byte-swapped (big-endian) GGUF file: version " + std::to_string(version >> 24));
  }
  if (version < 2 || version > 3) {
    return Fail("GGUF version " + std::to_string(version) + " (2 and 3 are read)");
  }
  m.version = static_cast<uint32_t>(version);
  m.tensor_count = Le(8);
  if (m.tensor_count > static_cast<uint64_t>(INT64_MAX)) return Fail("a negative tensor count");
  m.kv_count = Le(8);
  if (m.kv_count > kGgufMaxKeyValues) {
    return Fail(std::to_string(m.kv_count) + " key-value pairs (the limit is " +
                std::to_string(kGgufMaxKeyValues) + ")");
  }
  return Step::kOk;
}

Step Scanner::KeyValue(GgufMetadata& m) {
  key_.clear();
  std::string_view key;
  if (Step s = String(kGgufMaxKeyBytes, key); s != Step::kOk) return s;
  key_ = std::string(key);
  if (key.empty()) return Fail("an empty key");
  if (!keys_.insert(key_).second) return Fail("a duplicate key");
  uint64_t type = 0;
  if (Step s = Unsigned(4, type); s != Step::kOk) return s;
  return Value(static_cast<uint32_t>(type), m);
}

Step Scanner::Value(uint32_t type, GgufMetadata& m) {
  if (type == kString) {
    std::string_view value;
    if (Step s = String(kGgufMaxStringBytes, value); s != Step::kOk) return s;
    Keep(value, m);
    return Step::kOk;
  }
  if (type == kArray) return Array(m);
  const uint64_t size = FixedSize(type);
  if (size == 0) return Fail("unknown value type " + std::to_string(type));
  uint64_t raw = 0;
  if (Step s = Unsigned(size, raw); s != Step::kOk) return s;
  if (type == kBool) {
    if (raw > 1) return Fail("a bool of " + std::to_string(raw));
    if (key_ == "tokenizer.ggml.add_bos_token") m.add_bos_token = raw == 1;
    if (key_ == "tokenizer.ggml.add_eos_token") m.add_eos_token = raw == 1;
    return Step::kOk;
  }
  KeepInteger(type, raw, m);
  return Step::kOk;
}

Step Scanner::Array(GgufMetadata& m) {
  uint64_t element_type = 0;
  uint64_t count = 0;
  if (Step s = Unsigned(4, element_type); s != Step::kOk) return s;
  if (element_type == kArray) return Fail("a nested array (not supported)");
  if (Step s = Unsigned(8, count); s != Step::kOk) return s;
  if (count > kGgufMaxArrayElements) {
    return Fail("an array of " + std::to_string(count) + " elements (the limit is " +
                std::to_string(kGgufMaxArrayElements) + ")");
  }
  const bool tokens = key_ == "tokenizer.ggml.tokens" && element_type == kString;
  if (tokens) {
    tokens_at_ = pos_;
    m.token_count = count;
  }
  if (element_type == kString) {
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view ignored;
      if (Step s = String(kGgufMaxStringBytes, ignored); s != Step::kOk) return s;
    }
    return Step::kOk;
  }
  const uint64_t size = FixedSize(static_cast<uint32_t>(element_type));
  if (size == 0) return Fail("an array of unknown type " + std::to_string(element_type));
  if (element_type == kBool) {
    if (!Has(count)) return Step::kShort;
    for (uint64_t i = 0; i < count; ++i) {
      if (static_cast<unsigned char>(bytes_[pos_ + i]) > 1) return Fail("a bool array element");
    }
  }
  if (!Has(count * size)) return Step::kShort;  // count <= 1M, size <= 8: no overflow
  pos_ += count * size;
  return Step::kOk;
}

void Scanner::Keep(std::string_view value, GgufMetadata& m) {
  if (key_ == "general.architecture") m.architecture = value;
  if (key_ == "general.type") m.type = value;
  if (key_ == "general.name") m.name = value;
  if (key_ == "tokenizer.ggml.model") m.tokenizer_model = value;
  if (key_ == "tokenizer.ggml.pre") m.tokenizer_pre = value;
  if (key_ == "tokenizer.chat_template") m.chat_template = std::string(value);
  if (key_.starts_with(kTemplatePrefix) && key_.size() > kTemplatePrefix.size()) {
    m.named_chat_templates[key_.substr(kTemplatePrefix.size())] = value;
  }
}

void Scanner::KeepInteger(uint32_t type, uint64_t raw, GgufMetadata& m) {
  if (type == kF32 || type == kF64) return;
  if (!key_.starts_with(kTokenIdPrefix) || !key_.ends_with(kTokenIdSuffix)) return;
  const std::string which = key_.substr(
      kTokenIdPrefix.size(), key_.size() - kTokenIdPrefix.size() - kTokenIdSuffix.size());
  if (which.empty() || which.find('.') != std::string::npos) return;
  const uint64_t size = FixedSize(type);
  int64_t value = static_cast<int64_t>(raw);
  const bool is_signed = type == kI8 || type == kI16 || type == kI32 || type == kI64;
  if (is_signed && size < 8 && (raw >> (8 * size - 1)) != 0) {
    value = static_cast<int64_t>(raw | (~uint64_t{0} << (8 * size)));  // sign-extend
  }
  if (!is_signed && raw > static_cast<uint64_t>(INT64_MAX)) return;  // no token has that id
  m.special_token_ids[which] = value;
}

void Scanner::SpecialTokenText(GgufMetadata& m) {
  if (tokens_at_ == 0 || m.special_token_ids.empty()) return;
  std::map<int64_t, std::vector<std::string>> wanted;  // id -> which
  for (const auto& [which, id] : m.special_token_ids) {
    if (id >= 0 && static_cast<uint64_t>(id) < m.token_count) wanted[id].push_back(which);
  }
  pos_ = tokens_at_;
  int64_t index = 0;
  for (const auto& [id, names] : wanted) {
    for (; index < id; ++index) pos_ += Le(8);  // the first pass checked every length
    const uint64_t length = Le(8);
    const std::string text(bytes_.substr(pos_, length));
    pos_ += length;
    ++index;
    for (const std::string& which : names) m.special_token_text[which] = text;
  }
}

}  // namespace

Result<GgufScan> ScanGgufMetadata(std::string_view prefix) {
  Scanner scanner(prefix);
  GgufScan scan;
  auto stop = [&](Step step) -> Result<GgufScan> {
    if (step == Step::kBad) return Error::InvalidInput(scanner.error());
    scan.bytes_needed = scanner.needed();
    return scan;
  };
  if (Step s = scanner.Header(scan.metadata); s != Step::kOk) return stop(s);
  for (uint64_t i = 0; i < scan.metadata.kv_count; ++i) {
    if (Step s = scanner.KeyValue(scan.metadata); s != Step::kOk) return stop(s);
  }
  scan.metadata.metadata_bytes = scanner.pos();
  scanner.SpecialTokenText(scan.metadata);
  scan.complete = true;
  return scan;
}

}  // namespace hubwatch
