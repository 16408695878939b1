#include "daemon/page/gzip.h"

#include <zlib.h>

#include <cctype>

namespace hubwatch::page {

Result<std::string> Gzip(std::string_view data, int level) {
  z_stream z{};
  // 15 window bits + 16: a gzip wrapper.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error::Io("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const size_t written = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Error::Io("gzip: deflate did not finish");
  out.resize(written);
  return out;
}

bool AcceptsGzip(std::string_view header) {
  size_t start = 0;
  while (start < header.size()) {
    size_t comma = header.find(',', start);
    if (comma == std::string_view::npos) comma = header.size();
    std::string_view item = header.substr(start, comma - start);
    start = comma + 1;
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.remove_prefix(1);
    const size_t semi = item.find(';');
    std::string_view coding = item.substr(0, semi);
    while (!coding.empty() && std::isspace(static_cast<unsigned char>(coding.back())))
      coding.remove_suffix(1);
    if (coding != "gzip" && coding != "x-gzip" && coding != "*") continue;
    if (semi != std::string_view::npos) {
      std::string_view params = item.substr(semi + 1);
      const size_t q = params.find("q=");
      if (q != std::string_view::npos) {
        // q=0, q=0.0, q=0.000: refused; any other weight accepts.
        std::string_view v = params.substr(q + 2);
        v = v.substr(0, v.find_first_of(" ;"));
        if (!v.empty() && v.find_first_not_of("0.") == std::string_view::npos) continue;
      }
    }
    return true;
  }
  return false;
}

}  // namespace hubwatch::page
