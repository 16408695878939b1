#include "daemon/audit/yaml_scalar.h"

namespace hubwatch::audit {

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::pair<std::string, size_t> Unquote(std::string_view s) {
  char q = s[0];
  std::string out;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == q) {
      if (q == '\'' && i + 1 < s.size() && s[i + 1] == '\'') {
        out += '\'';
        ++i;
        continue;
      }
      return {out, i + 1};
    }
    if (q == '"' && s[i] == '\\' && i + 1 < s.size()) {
      char e = s[++i];
      out += (e == '"' || e == '\\' || e == '/') ? std::string(1, e) : std::string("\\") + e;
      continue;
    }
    out += s[i];
  }
  return {std::string(), 0};
}

std::string ScalarValue(std::string_view s) {
  if (s.empty()) return {};
  if (s[0] == '"' || s[0] == '\'') return Unquote(s).first;
  size_t hash = s.find(" #");
  return std::string(TrimRight(s.substr(0, hash)));
}

}  // namespace hubwatch::audit
