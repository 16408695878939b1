#include "daemon/api/http_message.h"

#include <nlohmann/json.hpp>

namespace hubwatch::api {

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpReply HttpReply::Json(int status, const nlohmann::json& body) {
  HttpReply r;
  r.status = status;
  r.body = DumpJson(body);
  return r;
}

HttpReply HttpReply::Error(int status, std::string_view message) {
  return Json(status, {{"error", message}});
}

}  // namespace hubwatch::api
