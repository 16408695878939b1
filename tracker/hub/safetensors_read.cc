// HubClient::ReadSafetensorsHeader: the header of a .safetensors file without its data, in at
// most two range reads (range_read.h):
//
//   1. bytes=0-100000; N = the 8-byte little-endian prefix, refused above
//      max_safetensors_header_bytes (and never above 100,000,000), via
//      estimator/safetensors_header.
//   2. If 8 + N bytes did not arrive, one more range read of the rest.
//   3. ParseSafetensorsHeader validates dtypes, shapes, contiguous offsets, __metadata__ strings,
//      and that the data fits in the file's size.

#include "estimator/formats/safetensors_header.h"
#include "tracker/hub/check_repo.h"
#include "tracker/hub/client.h"
#include "tracker/hub/range_read.h"

namespace hubwatch::hub {
namespace {

constexpr uint64_t kFirstReadBytes = 100'001;  // bytes=0-100000

class SafetensorsRead final : public RangeRead {
 public:
  SafetensorsRead(ExchangeRunner& runner, const HubClientOptions& options, std::string url,
                  HubCallback<SafetensorsHeaderInfo> done)
      : RangeRead(runner, std::move(url), options.download_timeout),
        done_(std::move(done)),
        max_header_(
            std::min(options.max_safetensors_header_bytes, kHardMaxSafetensorsHeaderBytes)) {}

 private:
  void OnError(HubError error) override { done_(std::move(error), stats()); }

  void OnBytes() override {
    if (range_reads() == 1) {
      Result<uint64_t> length = ReadSafetensorsHeaderLength(bytes(), max_header_);
      if (!length.ok()) return Invalid(length.error().message);
      header_length_ = *length;
      if (8 + *length > file_size()) {
        return Invalid("header length " + std::to_string(*length) + " runs past the end of a " +
                       std::to_string(file_size()) + "-byte file");
      }
      if (bytes().size() < 8 + *length) return ReadMore(8 + *length - 1);
    }
    std::string_view json = std::string_view(bytes()).substr(8, header_length_);
    Result<SafetensorsHeader> header = ParseSafetensorsHeader(json, file_size());
    if (!header.ok()) return Invalid(header.error().message);
    SafetensorsHeaderInfo info;
    info.header = std::move(header).value();
    info.header_length = header_length_;
    info.file_size = file_size();
    info.file = file();
    info.range_reads = range_reads();
    done_(std::move(info), stats());
  }

  HubCallback<SafetensorsHeaderInfo> done_;
  uint64_t max_header_;
  uint64_t header_length_ = 0;
};

}  // namespace

void HubClient::ReadSafetensorsHeader(const std::string& repo, const std::string& revision,
                                      const std::string& path,
                                      HubCallback<SafetensorsHeaderInfo> done) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  std::make_shared<SafetensorsRead>(*runner_, options_, ResolveUrl(repo, revision, path),
                                    std::move(done))
      ->Start(kFirstReadBytes);
}

}  // namespace hubwatch::hub
