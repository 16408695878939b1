#include "daemon/api/http_message.h"

#include <nlohmann/json.hpp>

namespace hubwatch::api {

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

namespace {

// Serializer output that keeps the first `max` bytes and counts them all.
class CappedOutput final : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  CappedOutput(std::string& out, size_t max) : out_(out), max_(max) {}
  void write_character(char c) override { write_characters(&c, 1); }
  void write_characters(const char* s, std::size_t n) override {
    if (size_ + n <= max_) out_.append(s, n);
    size_ += n;
  }
  size_t size() const { return size_; }

 private:
  std::string& out_;
  const size_t max_;
  size_t size_ = 0;
};

}  // namespace

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::string> DumpJsonWithin(const nlohmann::json& value, size_t max, size_t* size) {
  std::string out;
  auto output = std::make_shared<CappedOutput>(out, max);
  nlohmann::detail::serializer<nlohmann::json> serializer(output, ' ',
                                                          nlohmann::json::error_handler_t::replace);
  serializer.dump(value, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
  if (size) *size = output->size();
  if (output->size() > max) return std::nullopt;
  return out;
}

HttpReply HttpReply::Json(int status, const nlohmann::json& body) {
  size_t size = 0;
  std::optional<std::string> text = DumpJsonWithin(body, kMaxReplyBytes, &size);
  if (!text) return TooLarge("the reply", size, kMaxReplyBytes);
  HttpReply r;
  r.status = status;
  r.body = std::move(*text);
  return r;
}

HttpReply HttpReply::TooLarge(std::string_view what, size_t size, size_t cap) {
  return Error(500, std::string(what) + " is " + std::to_string(size) +
                        " bytes, too large to serve (the API sends at most " + std::to_string(cap) +
                        ")");
}

HttpReply HttpReply::Error(int status, std::string_view message) {
  return Json(status, {{"error", message}});
}

}  // namespace hubwatch::api
