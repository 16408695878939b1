#include "estimator/format.h"

#include <charconv>
#include <cstdio>

namespace hubwatch {

std::string Gigabytes(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  return buf;
}

std::string Number(double value, int digits) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, digits);
  std::string s(buf, result.ec == std::errc() ? result.ptr : buf);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace hubwatch
