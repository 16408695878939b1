#pragma once

// RangeRead: the start of one file read with HTTP Range requests, for the readers of file
// headers (safetensors, GGUF); internal to the Hub client.
//
//   1. GET resolve URL, Range: bytes=0-(first_bytes-1), following redirects (the token stays on
//      the Hub). 206 and a Content-Range "bytes 0-E/TOTAL" are required: a 200 means Range was
//      ignored and the read stops just past the asked length instead of downloading the file.
//   2. The subclass looks at the bytes so far (OnBytes) and asks for more (ReadMore) or ends.
//   3. More is read from the URL that served the first read (a signed CDN URL, no token),
//      consistent in start and total.
//
// Lifetime: owned by shared_ptr; each read holds a reference until its callback ran. One loop
// thread, as the client.

#include <cstdint>
#include <memory>
#include <string>

#include "tracker/hub/exchange.h"
#include "tracker/hub/hub_error.h"
#include "tracker/hub/hub_types.h"

namespace hubwatch::hub {

class RangeRead : public std::enable_shared_from_this<RangeRead> {
 public:
  virtual ~RangeRead() = default;
  // Reads bytes [0, first_bytes).
  void Start(uint64_t first_bytes) { Read(url_, 0, first_bytes - 1); }

 protected:
  // REQUIRES: runner outlives the read.
  RangeRead(ExchangeRunner& runner, std::string url, std::chrono::milliseconds timeout)
      : runner_(runner), url_(std::move(url)), timeout_(timeout) {}

  // After each read: bytes() grew. Call ReadMore or end (Done/Fail in the subclass).
  virtual void OnBytes() = 0;
  virtual void OnError(HubError error) = 0;

  // Reads on to byte `last` inclusive (clipped at the file's end).
  void ReadMore(uint64_t last) { Read(second_url_, bytes_.size(), last); }
  // A protocol error about the exchange (the server's answer), as the reader's error.
  void Fail(std::string detail, int status) {
    OnError(ProtocolError(std::move(detail), url_, status));
  }
  // The bytes arrived as asked but are not a valid file of the reader's format.
  void Invalid(std::string detail) { OnError(InvalidFileError(std::move(detail), url_)); }

  const std::string& bytes() const { return bytes_; }
  uint64_t file_size() const { return file_size_; }
  const ResolvedFile& file() const { return file_; }
  int range_reads() const { return range_reads_; }
  const CallStats& stats() const { return stats_; }

 private:
  void Read(const std::string& url, uint64_t first, uint64_t last);
  void OnRead(HubResult<ExchangeResponse> result, uint64_t first, uint64_t last);

  ExchangeRunner& runner_;
  std::string url_;
  std::chrono::milliseconds timeout_;
  std::string second_url_;
  std::string bytes_;
  uint64_t file_size_ = 0;
  ResolvedFile file_;
  int range_reads_ = 0;
  CallStats stats_;
};

}  // namespace hubwatch::hub
