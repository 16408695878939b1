#include "tracker/hub/http_types.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace hubwatch::hub {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view TrimWhitespace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> ParseHeaderNumber(std::string_view value) {
  uint64_t number = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty()) return std::nullopt;
  return number;
}

void HttpHeaders::Add(std::string name, std::string value) {
  entries_.emplace_back(std::move(name), std::move(value));
}

void HttpHeaders::Set(std::string name, std::string value) {
  Remove(name);
  Add(std::move(name), std::move(value));
}

void HttpHeaders::Remove(std::string_view name) {
  std::erase_if(entries_, [&](const auto& e) { return EqualsIgnoreCase(e.first, name); });
}

std::optional<std::string_view> HttpHeaders::Get(std::string_view name) const {
  for (const auto& [n, v] : entries_) {
    if (EqualsIgnoreCase(n, name)) return std::string_view(v);
  }
  return std::nullopt;
}

std::string_view TransportErrorKindName(TransportErrorKind kind) {
  switch (kind) {
    case TransportErrorKind::kTimeout:
      return "timeout";
    case TransportErrorKind::kConnect:
      return "connect";
    case TransportErrorKind::kConnectionReset:
      return "connection reset";
    case TransportErrorKind::kTruncated:
      return "truncated body";
    case TransportErrorKind::kProtocol:
      return "protocol";
    case TransportErrorKind::kCertificate:
      return "certificate not verified";
    case TransportErrorKind::kShutdown:
      return "shutdown";
    case TransportErrorKind::kOther:
      return "other";
  }
  return "other";
}

}  // namespace hubwatch::hub
