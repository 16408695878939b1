#include "tracker/hub/resolve_answer.h"

#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

std::string NormalizeEtag(std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

}  // namespace

HubResult<ResolvedFile> ResolvedFileOf(const ExchangeResponse& exchange, const std::string& url) {
  ResolvedFile file;
  const HttpHeaders& id = exchange.identity;
  const HttpResponse& last = exchange.response;
  file.final_status = last.status;
  file.commit = std::string(id.Get("X-Repo-Commit").value_or(""));
  if (file.commit.empty()) {
    return ProtocolError("resolve answer without X-Repo-Commit", url, last.status);
  }
  std::optional<std::string_view> etag = id.Get("X-Linked-Etag");
  if (!etag) etag = id.Get("ETag");
  file.etag = NormalizeEtag(etag.value_or(""));
  if (auto size = id.Get("X-Linked-Size")) {
    file.size = ParseHeaderNumber(*size);
    if (!file.size) return ProtocolError("X-Linked-Size is not a number", url, last.status);
  } else if (last.status == 200 && !exchange.from_cache) {
    if (auto length = last.headers.Get("Content-Length")) file.size = ParseHeaderNumber(*length);
  }
  if (last.status / 100 == 3) {
    file.is_lfs = true;
    file.location = ResolveReference(exchange.final_url, last.headers.Get("Location").value_or(""))
                        .value_or("");
  }
  return file;
}

HubResult<FileContent> FileContentOf(ExchangeResponse exchange, const std::string& url,
                                     uint64_t max_bytes) {
  HttpResponse& response = exchange.response;
  if (response.body_limit_hit) {
    return ProtocolError(
        "file is larger than the download limit of " + std::to_string(max_bytes) + " bytes", url,
        response.status);
  }
  HubResult<ResolvedFile> file = ResolvedFileOf(exchange, url);
  if (!file.ok()) return file.error();
  if (file->size && *file->size != response.body.size()) {
    return ProtocolError("wrong length: X-Linked-Size " + std::to_string(*file->size) + ", body " +
                             std::to_string(response.body.size()) + " bytes",
                         url, response.status);
  }
  FileContent content;
  content.file = std::move(file).value();
  content.file.is_lfs = OriginOf(exchange.final_url) != OriginOf(url);
  if (content.file.is_lfs) content.file.location = exchange.final_url;
  content.from_cache = exchange.from_cache;
  content.body = std::move(response.body);
  return content;
}

}  // namespace hubwatch::hub
