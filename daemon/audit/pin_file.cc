#include "daemon/audit/pin_file.h"

#include <string>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/hub_id.h"

namespace hubwatch::audit {

FileFindings FindPinFileReferences(std::string_view file, std::string_view text, bool strict) {
  FindingsBuilder out(file);
  bool all_pins = true;
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    std::string_view entry = raw.substr(0, raw.find('#'));
    size_t first = entry.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    size_t last = entry.find_last_not_of(" \t\r");
    entry = entry.substr(first, last - first + 1);
    size_t at = entry.find('@');
    std::string_view id = entry.substr(0, at);
    std::string_view revision = at == std::string_view::npos ? "" : entry.substr(at + 1);
    bool pin = IsHubRepoId(id, IdContext::kModelOnly) && !LooksLikeLocalPath(id) &&
               (at == std::string_view::npos || IsRevisionSyntax(revision));
    if (!pin) {
      all_pins = false;
      if (strict)
        out.AddUnresolved(line, "pinfile: not a pin (org/name@revision): " + QuoteSource(entry));
      continue;
    }
    out.Add("pinfile", line, static_cast<int>(first) + 1, SourceValue::Literal(std::string(id)),
            SourceValue::Literal(std::string(revision)), IdContext::kModelOnly);
  }
  if (!strict && !all_pins) return {};
  return out.Take();
}

}  // namespace hubwatch::audit
