#pragma once

// A JSON parse that keeps only what its readers read: an upstream document is parsed as a
// stream (nlohmann's SAX) and only the members and elements a JsonShape names are put in the
// DOM, so a body's unknown fields and the elements of a list past its cap are never
// materialised. The work stays linear in the body; what is kept is bounded by the shape.
//
// Values of an unexpected kind keep their kind, so a reader's type checks still see them: a
// scalar where a container was expected is kept as is, and a container where another kind was
// expected is kept empty. Of duplicate keys the first wins.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <unordered_map>

namespace hubwatch::hub {

struct JsonShape;

// One member an object shape keeps.
struct JsonMember {
  std::string_view key;
  const JsonShape* shape;
};

// What of one upstream value is kept.
struct JsonShape {
  enum class Kind {
    kScalar,  // a string, number, boolean or null
    kObject,  // an object of known keys: `members` are kept, other keys are dropped
    kList,    // an array: its first `cap` elements, each of shape `element`
    kMap,     // an object of free keys: its first `cap` members, each of shape `element`
  };
  Kind kind = Kind::kScalar;
  std::span<const JsonMember> members = {};
  const JsonShape* element = nullptr;
  size_t cap = 0;
};

inline constexpr JsonShape kJsonScalar{};

// A parsed document: `root` is discarded when the body is not valid JSON.
class ShapedJson {
 public:
  nlohmann::json root;

  // How many elements (or members) the document listed in `container`, one of root's arrays
  // or objects: more than container.size() when a cap cut it.
  size_t Listed(const nlohmann::json& container) const;

 private:
  friend ShapedJson ParseShaped(std::string_view body, const JsonShape& shape);
  std::unordered_map<const void*, size_t> listed_;  // cut containers -> their listed count
};

// Parses `body` (strict JSON: trailing text is an error) keeping what `shape` names. Never
// throws.
ShapedJson ParseShaped(std::string_view body, const JsonShape& shape);

}  // namespace hubwatch::hub
