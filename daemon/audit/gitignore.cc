#include "daemon/audit/gitignore.h"

#include <utility>

namespace hubwatch::audit {
namespace {

std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) parts.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

// A bracket expression at pattern[p] ('['): whether it matches c; *end is past its ']'.
// false with *end == p when the bracket is not closed (then '[' is a literal).
bool MatchClass(std::string_view pattern, size_t p, char c, size_t* end) {
  size_t i = p + 1;
  bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
  if (negate) ++i;
  bool matched = false;
  bool first = true;
  while (i < pattern.size() && (pattern[i] != ']' || first)) {
    first = false;
    char lo = pattern[i];
    if (lo == '\\' && i + 1 < pattern.size()) lo = pattern[++i];
    char hi = lo;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      hi = pattern[i + 2];
      i += 2;
    }
    if (lo <= c && c <= hi) matched = true;
    ++i;
  }
  if (i >= pattern.size()) {
    *end = p;
    return false;
  }
  *end = i + 1;
  return matched != negate;
}

// Segments of a pattern against components of a path; "**" matches any number of components.
bool MatchSegments(const std::vector<std::string>& pattern,
                   const std::vector<std::string_view>& path) {
  size_t p = 0;
  size_t n = 0;
  size_t star_p = std::string::npos;
  size_t star_n = 0;
  while (n < path.size()) {
    if (p < pattern.size() && pattern[p] == "**") {
      star_p = p++;
      star_n = n;
    } else if (p < pattern.size() && GlobMatchSegment(pattern[p], path[n])) {
      ++p;
      ++n;
    } else if (star_p != std::string::npos) {
      p = star_p + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == "**") ++p;
  return p == pattern.size();
}

}  // namespace

bool GlobMatchSegment(std::string_view pattern, std::string_view name) {
  size_t p = 0;
  size_t n = 0;
  size_t star_p = std::string_view::npos;
  size_t star_n = 0;
  while (n < name.size()) {
    size_t next = p + 1;
    bool step = false;
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '*') {
        star_p = p++;
        star_n = n;
        continue;
      }
      if (pc == '?') {
        step = true;
      } else if (pc == '[') {
        size_t end = p;
        step = MatchClass(pattern, p, name[n], &end);
        if (end == p)
          step = name[n] == '[';  // unclosed: a literal '['
        else
          next = end;
      } else if (pc == '\\' && p + 1 < pattern.size()) {
        step = pattern[p + 1] == name[n];
        next = p + 2;
      } else {
        step = pc == name[n];
      }
    }
    if (step) {
      p = next;
      ++n;
    } else if (star_p != std::string_view::npos) {
      p = star_p + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

IgnoreRules IgnoreRules::Parse(std::string_view text) {
  IgnoreRules rules;
  size_t pos = 0;
  while (pos < text.size() && rules.rules_.size() < kMaxIgnoreRules) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ') &&
           !(line.size() >= 2 && line.back() == ' ' && line[line.size() - 2] == '\\')) {
      line.remove_suffix(1);
    }
    if (line.empty() || line[0] == '#') continue;
    Rule rule;
    if (line[0] == '!') {
      rule.negate = true;
      line.remove_prefix(1);
    } else if (line[0] == '\\' && line.size() > 1 && (line[1] == '#' || line[1] == '!')) {
      line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/') {
      rule.directory_only = true;
      line.remove_suffix(1);
    }
    std::string_view body = line;
    bool anchored = !body.empty() && body[0] == '/';
    if (anchored) body.remove_prefix(1);
    if (body.empty()) continue;
    rule.basename_only = !anchored && body.find('/') == std::string_view::npos;
    for (std::string_view part : Split(body)) rule.segments.emplace_back(part);
    rules.rules_.push_back(std::move(rule));
  }
  return rules;
}

IgnoreRules::Verdict IgnoreRules::Match(std::string_view path, bool is_directory) const {
  if (rules_.empty()) return Verdict::kNoMatch;
  std::vector<std::string_view> parts = Split(path);
  if (parts.empty()) return Verdict::kNoMatch;
  for (size_t i = rules_.size(); i-- > 0;) {
    const Rule& rule = rules_[i];
    if (rule.directory_only && !is_directory) continue;
    bool hit = rule.basename_only ? GlobMatchSegment(rule.segments[0], parts.back())
                                  : MatchSegments(rule.segments, parts);
    if (hit) return rule.negate ? Verdict::kInclude : Verdict::kIgnore;
  }
  return Verdict::kNoMatch;
}

}  // namespace hubwatch::audit
