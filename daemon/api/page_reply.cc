#include "daemon/api/page_reply.h"

#include <cstdio>

#include "daemon/page/escape.h"
#include "daemon/page/gzip.h"
#include "hubwatch/version.h"

namespace hubwatch::api {
namespace {

// Bodies smaller than this are not worth compressing.
constexpr size_t kMinGzipBytes = 1024;

void SecurityHeaders(HttpReply& reply) {
  reply.headers.emplace_back("Content-Security-Policy", kPageCsp);
  reply.headers.emplace_back("X-Content-Type-Options", "nosniff");
  reply.headers.emplace_back("Referrer-Policy", "no-referrer");
  reply.headers.emplace_back("X-Frame-Options", "DENY");
}

}  // namespace

PageTag& PageTag::Add(std::string_view part) {
  auto mix = [this](unsigned char c) {
    hash_ ^= c;
    hash_ *= 1099511628211ull;
  };
  for (char c : std::to_string(part.size())) mix(static_cast<unsigned char>(c));
  mix(':');
  for (char c : part) mix(static_cast<unsigned char>(c));
  return *this;
}

std::string PageTag::Value() const {
  PageTag t = *this;
  t.Add(kVersion);
  char buf[40];
  std::snprintf(buf, sizeof buf, "W/\"%016llx\"", static_cast<unsigned long long>(t.hash_));
  return buf;
}

bool NotModified(const HttpRequest& request, const std::string& etag) {
  std::optional<std::string_view> header = request.header("if-none-match");
  if (!header || etag.empty()) return false;
  if (*header == "*") return true;
  // Weak comparison: W/"x" matches "x" and W/"x".
  const std::string_view opaque = std::string_view(etag).substr(2);
  size_t at = 0;
  while ((at = header->find(opaque, at)) != std::string_view::npos) {
    const size_t end = at + opaque.size();
    const bool starts =
        at == 0 || (*header)[at - 1] == ' ' || (*header)[at - 1] == ',' || (*header)[at - 1] == '/';
    const bool ends = end == header->size() || (*header)[end] == ',' || (*header)[end] == ' ';
    if (starts && ends) return true;
    at = end;
  }
  return false;
}

bool AcceptsGzip(const HttpRequest& request) {
  const std::optional<std::string_view> accept = request.header("accept-encoding");
  return accept && page::AcceptsGzip(*accept);
}

EncodedBody EncodeBody(std::string body, bool gzip) {
  if (gzip && body.size() >= kMinGzipBytes) {
    Result<std::string> gz = page::Gzip(body);
    if (gz.ok()) return {std::move(gz).value(), true};
  }
  return {std::move(body), false};
}

HttpReply PageReply(int status, std::string content_type, EncodedBody body,
                    const std::string& etag) {
  HttpReply reply;
  reply.status = status;
  reply.content_type = std::move(content_type);
  SecurityHeaders(reply);
  reply.headers.emplace_back("Vary", "Accept-Encoding");
  if (!etag.empty()) {
    reply.headers.emplace_back("ETag", etag);
    reply.headers.emplace_back("Cache-Control", "no-cache");
  }
  if (body.gzip) reply.headers.emplace_back("Content-Encoding", "gzip");
  reply.body = std::move(body.bytes);
  return reply;
}

HttpReply PageReply(const HttpRequest& request, int status, std::string content_type,
                    std::string body, const std::string& etag) {
  if (status == 200 && NotModified(request, etag)) {
    return PageReply(304, std::move(content_type), {}, etag);
  }
  return PageReply(status, std::move(content_type),
                   EncodeBody(std::move(body), AcceptsGzip(request)), etag);
}

HttpReply PageError(const HttpRequest& request, int status, std::string_view message) {
  std::string body =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      std::to_string(status) +
      " · hubwatch</title>\n<link rel=\"stylesheet\" href=\"/page.css\">\n"
      "</head>\n<body>\n<main>\n<h1>" +
      std::to_string(status) + "</h1>\n<p class=\"error\">" + page::Html(message) +
      "</p>\n<p><a href=\"/\">All tracked models</a></p>\n</main>\n"
      "</body>\n</html>\n";
  return PageReply(request, status, "text/html; charset=utf-8", std::move(body), "");
}

}  // namespace hubwatch::api
