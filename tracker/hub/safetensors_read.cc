// HubClient::ReadSafetensorsHeader: the header of a .safetensors file without its data.
//
//   1. GET resolve URL, Range: bytes=0-100000 (following redirects; the token stays on the Hub).
//      206 and a Content-Range "bytes 0-E/TOTAL" are required: a 200 means Range was ignored and
//      the read stops at the limit instead of downloading the file.
//   2. N = the 8-byte little-endian prefix, refused above max_safetensors_header_bytes (and never
//      above 100,000,000), via estimator/safetensors_header.
//   3. If 8 + N bytes did not arrive, one more range read of the rest, from the URL that served
//      the first (a signed CDN URL, no token), consistent in start and total.
//   4. ParseSafetensorsHeader validates dtypes, shapes, contiguous offsets, __metadata__ strings,
//      and that the data fits in TOTAL.

#include <charconv>

#include "estimator/formats/safetensors_header.h"
#include "tracker/hub/client.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

constexpr uint64_t kFirstReadBytes = 100'001;  // bytes=0-100000

struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t total = 0;
};

std::optional<uint64_t> ToUnsigned(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "bytes 0-99/1234"; nullopt for anything else, including an unknown total ("/*").
std::optional<ContentRange> ParseContentRange(std::string_view header) {
  if (!header.starts_with("bytes ")) return std::nullopt;
  header.remove_prefix(6);
  const size_t dash = header.find('-');
  const size_t slash = header.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) {
    return std::nullopt;
  }
  auto first = ToUnsigned(header.substr(0, dash));
  auto last = ToUnsigned(header.substr(dash + 1, slash - dash - 1));
  auto total = ToUnsigned(header.substr(slash + 1));
  if (!first || !last || !total || *first > *last || *last >= *total) return std::nullopt;
  return ContentRange{*first, *last, *total};
}

}  // namespace

class HubClient::SafetensorsRead : public std::enable_shared_from_this<SafetensorsRead> {
 public:
  SafetensorsRead(HubClient& client, std::string url, HubCallback<SafetensorsHeaderInfo> done)
      : client_(client), url_(std::move(url)), done_(std::move(done)) {
    max_header_ =
        std::min(client.options_.max_safetensors_header_bytes, kHardMaxSafetensorsHeaderBytes);
  }

  void Start() { Read(url_, 0, kFirstReadBytes - 1); }

 private:
  void Read(const std::string& url, uint64_t first, uint64_t last) {
    ExchangeRequest request;
    request.kind = RequestKind::kRangeRead;
    request.url = url;
    request.redirects = RedirectPolicy::kAll;
    request.timeout = client_.options_.download_timeout;
    request.headers.Add("Range", "bytes=" + std::to_string(first) + "-" + std::to_string(last));
    // A server that ignores Range is cut off just past what was asked for.
    request.max_body_bytes = last - first + 2;
    auto self = shared_from_this();
    client_.runner_->Run(std::move(request), &stats_,
                         [self, first, last](HubResult<ExchangeResponse> result) {
                           self->OnRead(std::move(result), first, last);
                         });
  }

  void Fail(HubError error) { done_(std::move(error), stats_); }
  void Fail(std::string detail, int status) {
    Fail(ProtocolError(std::move(detail), url_, status));
  }

  void OnRead(HubResult<ExchangeResponse> result, uint64_t first, uint64_t last) {
    if (!result.ok()) return Fail(result.error());
    const HttpResponse& response = result->response;
    if (response.status != 206) {
      return Fail(
          "Range was ignored: status " + std::to_string(response.status) + " instead of 206",
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
      return Fail("wrong length: asked bytes " + std::to_string(first) + "-" +
                      std::to_string(last) + ", got Content-Range " + std::to_string(range->first) +
                      "-" + std::to_string(range->last) + " with " +
                      std::to_string(response.body.size()) + " body bytes",
                  206);
    }
    ++info_.range_reads;
    if (first == 0) {
      info_.file_size = range->total;
      HubResult<ResolvedFile> identity = [&]() -> HubResult<ResolvedFile> {
        ResolvedFile file;
        file.commit = std::string(result->identity.Get("X-Repo-Commit").value_or(""));
        std::string etag(result->identity.Get("X-Linked-Etag").value_or(""));
        if (etag.size() >= 2 && etag.front() == '"') etag = etag.substr(1, etag.size() - 2);
        file.etag = etag;
        file.size = range->total;
        file.final_status = 206;
        file.is_lfs = OriginOf(result->final_url) != OriginOf(url_);
        if (file.is_lfs) file.location = result->final_url;
        return file;
      }();
      info_.file = std::move(identity).value();
      second_url_ = result->final_url;
    } else if (range->total != info_.file_size) {
      return Fail("file size changed between range reads", 206);
    }
    bytes_ += response.body;
    if (first == 0) {
      Result<uint64_t> length = ReadSafetensorsHeaderLength(bytes_, max_header_);
      if (!length.ok()) return Fail(length.error().message, 206);
      info_.header_length = *length;
      if (8 + *length > info_.file_size) {
        return Fail("header length " + std::to_string(*length) + " runs past the end of a " +
                        std::to_string(info_.file_size) + "-byte file",
                    206);
      }
      if (bytes_.size() < 8 + *length) return Read(second_url_, bytes_.size(), 8 + *length - 1);
    }
    Finish();
  }

  void Finish() {
    std::string_view json = std::string_view(bytes_).substr(8, info_.header_length);
    Result<SafetensorsHeader> header = ParseSafetensorsHeader(json, info_.file_size);
    if (!header.ok()) return Fail(header.error().message, 206);
    info_.header = std::move(header).value();
    done_(std::move(info_), stats_);
  }

  HubClient& client_;
  std::string url_;
  std::string second_url_;
  HubCallback<SafetensorsHeaderInfo> done_;
  uint64_t max_header_ = kDefaultMaxSafetensorsHeaderBytes;
  CallStats stats_;
  SafetensorsHeaderInfo info_;
  std::string bytes_;
};

void HubClient::ReadSafetensorsHeader(const std::string& repo, const std::string& revision,
                                      const std::string& path,
                                      HubCallback<SafetensorsHeaderInfo> done) {
  if (!CheckRepo(repo, done)) return;
  std::make_shared<SafetensorsRead>(*this, ResolveUrl(repo, revision, path), std::move(done))
      ->Start();
}

}  // namespace hubwatch::hub
