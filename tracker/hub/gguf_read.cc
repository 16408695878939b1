// HubClient::ReadGgufMetadata: the key-value metadata of a .gguf file without its tensors, by
// range reads (range_read.h) as @huggingface/gguf reads remote headers, in larger steps: the
// first 8 MiB (a Llama 3 vocabulary and its merges take about 7), then as far as the scanner
// says it needs, at least doubling, up to max_gguf_metadata_bytes (64 MiB at most); a file
// whose metadata runs past that is refused, never downloaded.

#include <algorithm>

#include "estimator/formats/gguf_header.h"
#include "tracker/hub/check_repo.h"
#include "tracker/hub/client.h"
#include "tracker/hub/range_read.h"

namespace hubwatch::hub {
namespace {

class GgufRead final : public RangeRead {
 public:
  GgufRead(ExchangeRunner& runner, const HubClientOptions& options, std::string url,
           HubCallback<GgufMetadataInfo> done)
      : RangeRead(runner, std::move(url), options.download_timeout),
        done_(std::move(done)),
        max_bytes_(std::min(options.max_gguf_metadata_bytes, kHardMaxGgufMetadataBytes)) {}

  uint64_t first_read() const { return std::min(kFirstGgufReadBytes, max_bytes_); }

 private:
  void OnError(HubError error) override { done_(std::move(error), stats()); }

  void OnBytes() override {
    Result<GgufScan> scan = ScanGgufMetadata(bytes());
    if (!scan.ok()) return Invalid(scan.error().message);
    if (!scan->complete) {
      const uint64_t have = bytes().size();
      if (have >= file_size()) return Invalid("the GGUF metadata runs past the end of the file");
      const uint64_t want = std::min(std::max(scan->bytes_needed, have * 2), file_size());
      if (scan->bytes_needed > max_bytes_) {
        return Invalid("the GGUF metadata needs more than " + std::to_string(max_bytes_) +
                       " bytes (at least " + std::to_string(scan->bytes_needed) + ")");
      }
      return ReadMore(std::min(want, max_bytes_) - 1);
    }
    GgufMetadataInfo info;
    info.metadata = std::move(scan->metadata);
    info.file_size = file_size();
    info.file = file();
    info.range_reads = range_reads();
    info.bytes_read = bytes().size();
    done_(std::move(info), stats());
  }

  HubCallback<GgufMetadataInfo> done_;
  uint64_t max_bytes_;
};

}  // namespace

void HubClient::ReadGgufMetadata(const std::string& repo, const std::string& revision,
                                 const std::string& path, HubCallback<GgufMetadataInfo> done) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  auto read = std::make_shared<GgufRead>(*runner_, options_, ResolveUrl(repo, revision, path),
                                         std::move(done));
  read->Start(read->first_read());
}

}  // namespace hubwatch::hub
