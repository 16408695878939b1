#include "tracker/hub/link_header.h"

#include "tracker/hub/http_types.h"

namespace hubwatch::hub {
namespace {

bool RelListHas(std::string_view list, std::string_view rel) {
  while (!list.empty()) {
    const size_t space = list.find(' ');
    if (EqualsIgnoreCase(list.substr(0, space), rel)) return true;
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return false;
}

}  // namespace

std::optional<std::string> FindLinkTarget(std::string_view header, std::string_view rel) {
  size_t pos = 0;
  while (pos < header.size()) {
    const size_t open = header.find('<', pos);
    if (open == std::string_view::npos) return std::nullopt;
    const size_t close = header.find('>', open);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view target = header.substr(open + 1, close - open - 1);
    // Parameters run to the next ',' outside quotes.
    size_t i = close + 1;
    bool quoted = false;
    size_t param_start = i;
    bool matched = false;
    auto check_param = [&](std::string_view param) {
      param = TrimWhitespace(param);
      const size_t eq = param.find('=');
      if (eq == std::string_view::npos) return;
      if (!EqualsIgnoreCase(TrimWhitespace(param.substr(0, eq)), "rel")) return;
      std::string_view value = TrimWhitespace(param.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      if (RelListHas(value, rel)) matched = true;
    };
    for (; i < header.size(); ++i) {
      const char c = header[i];
      if (c == '"') quoted = !quoted;
      if (quoted) continue;
      if (c == ';' || c == ',') {
        check_param(header.substr(param_start, i - param_start));
        param_start = i + 1;
        if (c == ',') break;
      }
    }
    if (i >= header.size()) check_param(header.substr(param_start));
    if (matched) return std::string(target);
    pos = i + 1;
  }
  return std::nullopt;
}

}  // namespace hubwatch::hub
