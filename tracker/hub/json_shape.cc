#include "tracker/hub/json_shape.h"

#include <string>
#include <utility>
#include <vector>

namespace hubwatch::hub {
namespace {

using nlohmann::json;

const void* ContainerAddress(const json& container) {
  // The heap array or map a json value points to: it stays put when the value itself moves.
  if (container.is_array()) return &container.get_ref<const json::array_t&>();
  if (container.is_object()) return &container.get_ref<const json::object_t&>();
  return nullptr;
}

// nlohmann's SAX events into a DOM of what the shape keeps. Its parse_error returns false, so
// the parser reports errors by returning false and never throws.
class ShapedBuilder {
 public:
  ShapedBuilder(const JsonShape& shape, json& root, std::unordered_map<const void*, size_t>& listed)
      : root_shape_(shape), root_(root), listed_(listed) {}

  bool null() { return Scalar(nullptr); }
  bool boolean(bool v) { return Scalar(v); }
  bool number_integer(json::number_integer_t v) { return Scalar(v); }
  bool number_unsigned(json::number_unsigned_t v) { return Scalar(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return Scalar(v); }
  bool string(json::string_t& v) { return Scalar(std::move(v)); }
  bool binary(json::binary_t&) { return true; }  // never in JSON text
  bool start_object(size_t) { return Open(/*object=*/true); }
  bool start_array(size_t) { return Open(/*object=*/false); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  bool key(json::string_t& k) {
    Frame& f = stack_.back();
    f.next = nullptr;
    if (!f.node || !f.shape) return true;
    if (f.shape->kind == JsonShape::Kind::kMap) {
      if (++f.seen <= f.shape->cap) f.next = f.shape->element;
    } else {
      for (const JsonMember& m : f.shape->members) {
        if (m.key == k) f.next = m.shape;
      }
    }
    // The first of duplicate keys wins: nothing kept is ever replaced, so the addresses in
    // listed_ stay those of live containers.
    if (f.next && f.node->contains(k)) f.next = nullptr;
    if (f.next) f.next_key = std::move(k);
    return true;
  }

 private:
  struct Frame {
    json* node = nullptr;              // nullptr: dropped, with all it holds
    const JsonShape* shape = nullptr;  // nullptr: kept empty (not the kind the shape expects)
    size_t seen = 0;                   // lists and maps: elements listed so far
    const JsonShape* next = nullptr;   // objects: the pending member's shape; nullptr: dropped
    std::string next_key;
  };
  struct Slot {
    json* value = nullptr;  // nullptr: the value is dropped
    const JsonShape* shape = nullptr;
  };

  // Where the value that starts now goes, and its shape.
  Slot Place() {
    if (stack_.empty()) return {&root_, &root_shape_};
    Frame& f = stack_.back();
    if (!f.node || !f.shape) return {};
    if (f.node->is_array()) {
      if (++f.seen > f.shape->cap) return {};
      return {&f.node->get_ref<json::array_t&>().emplace_back(), f.shape->element};
    }
    if (!f.next) return {};
    Slot slot{&(*f.node)[f.next_key], f.next};
    f.next = nullptr;
    return slot;
  }

  template <class V>
  bool Scalar(V&& v) {
    if (Slot slot = Place(); slot.value) *slot.value = std::forward<V>(v);
    return true;
  }

  bool Open(bool object) {
    const Slot slot = Place();
    const JsonShape* shape = slot.shape;
    if (slot.value) *slot.value = object ? json::object() : json::array();
    const bool fits = shape && (object ? shape->kind == JsonShape::Kind::kObject ||
                                             shape->kind == JsonShape::Kind::kMap
                                       : shape->kind == JsonShape::Kind::kList);
    Frame& frame = stack_.emplace_back();
    frame.node = slot.value;
    frame.shape = fits ? shape : nullptr;
    return true;
  }

  bool Close() {
    const Frame& f = stack_.back();
    if (f.node && f.shape && f.shape->kind != JsonShape::Kind::kObject && f.seen > f.shape->cap) {
      listed_[ContainerAddress(*f.node)] = f.seen;
    }
    stack_.pop_back();
    return true;
  }

  const JsonShape& root_shape_;
  json& root_;
  std::unordered_map<const void*, size_t>& listed_;
  std::vector<Frame> stack_;
};

}  // namespace

size_t ShapedJson::Listed(const json& container) const {
  auto it = listed_.find(ContainerAddress(container));
  return it == listed_.end() ? container.size() : it->second;
}

ShapedJson ParseShaped(std::string_view body, const JsonShape& shape) {
  ShapedJson doc;
  ShapedBuilder builder(shape, doc.root, doc.listed_);
  if (!json::sax_parse(body.begin(), body.end(), &builder, json::input_format_t::json,
                       /*strict=*/true, /*ignore_comments=*/false)) {
    doc.root = json(json::value_t::discarded);
    doc.listed_.clear();
  }
  return doc;
}

}  // namespace hubwatch::hub
