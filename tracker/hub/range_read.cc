#include "tracker/hub/range_read.h"

#include <optional>

#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t total = 0;
};

// "bytes 0-99/1234"; nullopt for anything else, including an unknown total ("/*").
std::optional<ContentRange> ParseContentRange(std::string_view header) {
  if (!header.starts_with("bytes ")) return std::nullopt;
  header.remove_prefix(6);
  const size_t dash = header.find('-');
  const size_t slash = header.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) {
    return std::nullopt;
  }
  auto first = ParseHeaderNumber(header.substr(0, dash));
  auto last = ParseHeaderNumber(header.substr(dash + 1, slash - dash - 1));
  auto total = ParseHeaderNumber(header.substr(slash + 1));
  if (!first || !last || !total || *first > *last || *last >= *total) return std::nullopt;
  return ContentRange{*first, *last, *total};
}

}  // namespace

void RangeRead::Read(const std::string& url, uint64_t first, uint64_t last) {
  ExchangeRequest request;
  request.kind = RequestKind::kRangeRead;
  request.url = url;
  request.redirects = RedirectPolicy::kAll;
  request.timeout = timeout_;
  request.headers.Add("Range", "bytes=" + std::to_string(first) + "-" + std::to_string(last));
  // A server that ignores Range is cut off just past what was asked for.
  request.max_body_bytes = last - first + 2;
  auto self = shared_from_this();
  runner_.Run(std::move(request), &stats_, [self, first, last](HubResult<ExchangeResponse> result) {
    self->OnRead(std::move(result), first, last);
  });
}

void RangeRead::OnRead(HubResult<ExchangeResponse> result, uint64_t first, uint64_t last) {
  if (!result.ok()) {
    // The first read asks for bytes from 0; only an empty file cannot satisfy that.
    if (first == 0 && result.error().http_status == 416) return Invalid("the file is empty");
    return OnError(result.error());
  }
  const HttpResponse& response = result->response;
  if (response.status != 206) {
    return Fail("Range was ignored: status " + std::to_string(response.status) + " instead of 206",
                response.status);
  }
  auto range = ParseContentRange(response.headers.Get("Content-Range").value_or(""));
  if (!range) {
    return Fail("206 without a usable Content-Range (\"" +
                    std::string(response.headers.Get("Content-Range").value_or("")) + "\")",
                206);
  }
  const uint64_t expected_last = std::min(last, range->total - 1);
  if (range->first != first || range->last != expected_last ||
      response.body.size() != range->last - range->first + 1) {
    return Fail("wrong length: asked bytes " + std::to_string(first) + "-" + std::to_string(last) +
                    ", got Content-Range " + std::to_string(range->first) + "-" +
                    std::to_string(range->last) + " with " + std::to_string(response.body.size()) +
                    " body bytes",
                206);
  }
  ++range_reads_;
  if (first == 0) {
    file_size_ = range->total;
    file_.commit = std::string(result->identity.Get("X-Repo-Commit").value_or(""));
    std::string etag(result->identity.Get("X-Linked-Etag").value_or(""));
    if (etag.size() >= 2 && etag.front() == '"') etag = etag.substr(1, etag.size() - 2);
    file_.etag = etag;
    file_.size = range->total;
    file_.final_status = 206;
    file_.is_lfs = OriginOf(result->final_url) != OriginOf(url_);
    if (file_.is_lfs) file_.location = result->final_url;
    second_url_ = result->final_url;
  } else if (range->total != file_size_) {
    return Fail("file size changed between range reads", 206);
  }
  bytes_ += response.body;
  OnBytes();
}

}  // namespace hubwatch::hub
