#include "tracker/hub/repo_id.h"

#include <cctype>
#include <string>

namespace hubwatch::hub {
namespace {

// At most 64 bytes of `text` for an error message, control bytes as \xNN; "..." when cut.
std::string Shown(std::string_view text) {
  constexpr size_t kMaxShown = 64;
  std::string out;
  for (unsigned char c : text.substr(0, kMaxShown)) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return text.size() > kMaxShown ? out + "..." : out;
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool ValidPart(std::string_view part, size_t max_size) {
  if (part.empty() || part.size() > max_size) return false;
  if (!IsWordChar(part.front()) || !IsWordChar(part.back())) return false;
  for (char c : part) {
    if (!IsWordChar(c) && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

Status ValidateRepoId(std::string_view repo_id) {
  auto bad = [&](std::string why) {
    return Error::InvalidInput("repo id \"" + Shown(repo_id) + "\": " + why);
  };
  const size_t slash = repo_id.find('/');
  if (slash != std::string_view::npos && repo_id.find('/', slash + 1) != std::string_view::npos) {
    return bad("more than one '/'");
  }
  const std::string_view name =
      slash == std::string_view::npos ? repo_id : repo_id.substr(slash + 1);
  if (slash != std::string_view::npos && !ValidPart(repo_id.substr(0, slash), 1000)) {
    return bad("invalid namespace");
  }
  if (!ValidPart(name, 96)) return bad("name must be 1-96 of [A-Za-z0-9_.-], word chars at ends");
  if (repo_id.find("--") != std::string_view::npos ||
      repo_id.find("..") != std::string_view::npos) {
    return bad("\"--\" and \"..\" are not allowed");
  }
  if (repo_id.ends_with(".git")) return bad("must not end with .git");
  return Status::Ok();
}

Status ValidatePin(std::string_view pin) {
  const bool ok = pin.size() >= 7 && pin.size() <= 40 &&
                  pin.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  if (!ok) {
    return Error::InvalidInput("'" + Shown(pin) +
                               "' is not a pin: 7 to 40 lower-case hex digits of a revision");
  }
  return Status::Ok();
}

Status ValidateRefName(std::string_view ref) {
  constexpr size_t kMaxRefLength = 255;
  bool ok = !ref.empty() && ref.size() <= kMaxRefLength && ref.front() != '-' &&
            ref.front() != '/' && ref.back() != '/' && ref.find("..") == std::string_view::npos;
  for (unsigned char c : ref) ok = ok && c > 0x20 && c < 0x7f && c != '~' && c != '^' && c != ':';
  if (!ok) return Error::InvalidInput("'" + Shown(ref) + "' is not a ref name");
  return Status::Ok();
}

bool IsCommitId(std::string_view text) {
  if (text.size() != 40) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

}  // namespace hubwatch::hub
