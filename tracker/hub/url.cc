#include "tracker/hub/url.h"

#include <arpa/inet.h>

#include <cctype>

namespace hubwatch::hub {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// RFC 3986 §5.2.4.
std::string RemoveDotSegments(std::string_view input) {
  std::string in(input);
  std::string out;
  while (!in.empty()) {
    if (in.starts_with("../")) {
      in.erase(0, 3);
    } else if (in.starts_with("./")) {
      in.erase(0, 2);
    } else if (in.starts_with("/./")) {
      in.erase(0, 2);
    } else if (in == "/.") {
      in = "/";
    } else if (in.starts_with("/../") || in == "/..") {
      in = in.size() == 3 ? std::string("/") : in.substr(3);
      const size_t slash = out.rfind('/');
      out.erase(slash == std::string::npos ? 0 : slash);
    } else if (in == "." || in == "..") {
      in.clear();
    } else {
      const size_t next = in.find('/', in.front() == '/' ? 1 : 0);
      out += in.substr(0, next);
      in.erase(0, next);
    }
  }
  return out;
}

// RFC 3986 §5.2.3.
std::string Merge(const UrlParts& base, std::string_view ref_path) {
  if (base.has_authority && base.path.empty()) return "/" + std::string(ref_path);
  const size_t slash = base.path.rfind('/');
  if (slash == std::string::npos) return std::string(ref_path);
  return base.path.substr(0, slash + 1) + std::string(ref_path);
}

std::string Encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        (keep_slash && c == '/')) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

UrlParts SplitUrl(std::string_view url) {
  UrlParts parts;
  // scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
  const size_t colon = url.find(':');
  if (colon != std::string_view::npos && colon > 0 &&
      std::isalpha(static_cast<unsigned char>(url[0]))) {
    bool valid = true;
    for (size_t i = 0; i < colon; ++i) {
      const auto c = static_cast<unsigned char>(url[i]);
      if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') valid = false;
    }
    const size_t first_delim = url.find_first_of("/?#");
    if (valid && (first_delim == std::string_view::npos || colon < first_delim)) {
      parts.has_scheme = true;
      parts.scheme = Lower(url.substr(0, colon));
      url.remove_prefix(colon + 1);
    }
  }
  if (url.starts_with("//")) {
    url.remove_prefix(2);
    const size_t end = url.find_first_of("/?#");
    parts.has_authority = true;
    parts.authority = std::string(url.substr(0, end));
    url.remove_prefix(end == std::string_view::npos ? url.size() : end);
  }
  const size_t hash = url.find('#');
  if (hash != std::string_view::npos) {
    parts.has_fragment = true;
    parts.fragment = std::string(url.substr(hash + 1));
    url = url.substr(0, hash);
  }
  const size_t question = url.find('?');
  if (question != std::string_view::npos) {
    parts.has_query = true;
    parts.query = std::string(url.substr(question + 1));
    url = url.substr(0, question);
  }
  parts.path = std::string(url);
  return parts;
}

std::string JoinUrl(const UrlParts& parts) {
  std::string out;
  if (parts.has_scheme) out += parts.scheme + ":";
  if (parts.has_authority) out += "//" + parts.authority;
  out += parts.path;
  if (parts.has_query) out += "?" + parts.query;
  if (parts.has_fragment) out += "#" + parts.fragment;
  return out;
}

std::optional<std::string> ResolveReference(std::string_view base_url, std::string_view reference) {
  const UrlParts base = SplitUrl(base_url);
  if (!base.has_scheme) return std::nullopt;
  const UrlParts ref = SplitUrl(reference);
  UrlParts target;
  if (ref.has_scheme) {
    target = ref;
    target.path = RemoveDotSegments(ref.path);
  } else {
    if (ref.has_authority) {
      target.authority = ref.authority;
      target.has_authority = true;
      target.path = RemoveDotSegments(ref.path);
      target.query = ref.query;
      target.has_query = ref.has_query;
    } else {
      if (ref.path.empty()) {
        target.path = base.path;
        target.query = ref.has_query ? ref.query : base.query;
        target.has_query = ref.has_query || base.has_query;
      } else {
        target.path = ref.path.front() == '/' ? RemoveDotSegments(ref.path)
                                              : RemoveDotSegments(Merge(base, ref.path));
        target.query = ref.query;
        target.has_query = ref.has_query;
      }
      target.authority = base.authority;
      target.has_authority = base.has_authority;
    }
    target.scheme = base.scheme;
    target.has_scheme = true;
  }
  target.fragment = ref.fragment;
  target.has_fragment = ref.has_fragment;
  return JoinUrl(target);
}

std::string OriginOf(std::string_view url) {
  const UrlParts parts = SplitUrl(url);
  if (!parts.has_scheme || !parts.has_authority) return "";
  return parts.scheme + "://" + Lower(parts.authority);
}

std::string HostOf(std::string_view url) {
  const UrlParts parts = SplitUrl(url);
  if (!parts.has_scheme || !parts.has_authority) return "";
  std::string_view host = parts.authority;
  if (const size_t at = host.rfind('@'); at != std::string_view::npos) host.remove_prefix(at + 1);
  if (host.starts_with('[')) {
    const size_t close = host.find(']');
    return close == std::string_view::npos ? "" : Lower(host.substr(1, close - 1));
  }
  return Lower(host.substr(0, host.find(':')));
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host.ends_with(".localhost")) return true;
  const std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, text.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::string EncodeComponent(std::string_view text) { return Encode(text, false); }
std::string EncodePath(std::string_view text) { return Encode(text, true); }

}  // namespace hubwatch::hub
