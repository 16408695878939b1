#include "daemon/api_client.h"

#include <curl/curl.h>

#include "estimator/base/text.h"

namespace hubwatch::cli {
namespace {

constexpr size_t kMaxReplyBytes = 64u << 20;
constexpr long kTimeoutMs = 30'000;

struct Collected {
  std::string body;
  bool too_large = false;
};

size_t Collect(char* data, size_t size, size_t count, void* user) {
  Collected& r = *static_cast<Collected*>(user);
  const size_t n = size * count;
  if (r.body.size() + n > kMaxReplyBytes) {
    r.too_large = true;
    return 0;  // aborts the transfer
  }
  r.body.append(data, n);
  return n;
}

}  // namespace

std::string UrlEscape(const std::string& text, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/');
    if (keep) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<std::unique_ptr<ApiClient>> ApiClient::Open(const std::string& base_url) {
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  const size_t scheme = url.find("://");
  const std::string name = scheme == std::string::npos ? "" : url.substr(0, scheme);
  const std::string rest = scheme == std::string::npos ? "" : url.substr(scheme + 3);
  bool ok = (name == "http" || name == "https") && !rest.empty() &&
            rest.find_first_of("/?#@ ") == std::string::npos;
  for (unsigned char c : rest) ok = ok && c > 0x20 && c < 0x7f;
  if (!ok) {
    return Error::InvalidInput("--api " + Clip(base_url) +
                               " is not http(s)://host[:port] (e.g. http://127.0.0.1:8437)");
  }
  std::unique_ptr<ApiClient> client(new ApiClient(url));
  if (!client->curl_) return Error::Io("--api: libcurl could not start");
  return client;
}

ApiClient::ApiClient(std::string base_url) : base_url_(std::move(base_url)) {
  curl_ = curl_easy_init();
}

ApiClient::~ApiClient() {
  if (curl_) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<ApiClient::Reply> ApiClient::Perform(const std::string& target,
                                            const std::string* post_body) {
  CURL* curl = static_cast<CURL*>(curl_);
  Collected reply;
  const std::string url = base_url_ + target;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  struct curl_slist* headers = nullptr;
  if (post_body) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post_body->c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(post_body->size()));
  } else {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, kTimeoutMs);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "hubwatch-cli");
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  if (reply.too_large) {
    return Error::Io("--api: the reply to " + Clip(target) + " is larger than 64 MiB");
  }
  if (rc != CURLE_OK) {
    return Error::Io("--api " + base_url_ + ": " + curl_easy_strerror(rc));
  }
  Reply out;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out.status);
  out.body = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  return out;
}

Result<nlohmann::json> ApiClient::Accept(const std::string& target, Reply reply) const {
  const nlohmann::json& body = reply.body;
  if (reply.status != 200) {
    const auto error = body.is_object() ? body.find("error") : body.end();
    std::string why = error != body.end() && error->is_string()
                          ? error->get<std::string>()
                          : "HTTP " + std::to_string(reply.status);
    why = "--api: " + Clip(why, 400);
    return reply.status >= 400 && reply.status < 500 ? Error::InvalidInput(why) : Error::Io(why);
  }
  if (!body.is_object()) {
    return Error::Io("--api: the reply to " + Clip(target) + " is not a JSON object");
  }
  return std::move(reply.body);
}

Result<nlohmann::json> ApiClient::Get(const std::string& target) {
  Result<Reply> reply = Perform(target, nullptr);
  if (!reply.ok()) return reply.error();
  return Accept(target, std::move(reply).value());
}

Result<std::optional<nlohmann::json>> ApiClient::GetIfFound(const std::string& target) {
  Result<Reply> reply = Perform(target, nullptr);
  if (!reply.ok()) return reply.error();
  if (reply->status == 404) return std::optional<nlohmann::json>();
  Result<nlohmann::json> body = Accept(target, std::move(reply).value());
  if (!body.ok()) return body.error();
  return std::optional<nlohmann::json>(std::move(body).value());
}

Result<nlohmann::json> ApiClient::Post(const std::string& target, const nlohmann::json& body) {
  const std::string text = body.dump();
  Result<Reply> reply = Perform(target, &text);
  if (!reply.ok()) return reply.error();
  return Accept(target, std::move(reply).value());
}

}  // namespace hubwatch::cli
