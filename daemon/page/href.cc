#include "daemon/page/href.h"

#include "tracker/hub/repo_id.h"

namespace hubwatch::page {
namespace {

bool Unreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

bool Valid(std::string_view repo) {
  return !repo.empty() && repo.find('/') != std::string_view::npos &&
         hub::ValidateRepoId(repo).ok();
}

}  // namespace

std::string QueryEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (Unreserved(c)) {
      out += c;
    } else {
      const auto b = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

std::string ModelPath(std::string_view repo) {
  return Valid(repo) ? "/models/" + std::string(repo) : "";
}

std::string HubRepoUrl(std::string_view repo) {
  return Valid(repo) ? kHubBase + std::string(repo) : "";
}

std::string HubCommitUrl(std::string_view repo, std::string_view sha) {
  if (!Valid(repo) || !hub::IsCommitId(sha)) return "";
  return kHubBase + std::string(repo) + "/commit/" + std::string(sha);
}

std::string Anchor(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 64)) {
    const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    out += (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') ? l : '-';
  }
  return out;
}

bool IsSafeHref(std::string_view href) {
  const bool local = href.size() >= 1 && href[0] == '/' && (href.size() < 2 || href[1] != '/');
  const bool hub = href.starts_with(kHubBase);
  if (!local && !hub) return false;
  for (char c : href) {
    const bool ok =
        Unreserved(c) || std::string_view("/?#&=%+:@!$,;*").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace hubwatch::page
