#include "daemon/audit/pin_file.h"

#include <string>
#include <vector>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/hub_id.h"

namespace hubwatch::audit {
namespace {

// Why a line's entry is not a pin, for the report (the entry quoted safely).
std::string NotAPin(std::string_view entry, std::string_view id, std::string_view revision,
                    bool has_revision) {
  if (LooksLikeLocalPath(id)) return "pinfile: a local path, not a pin: " + QuoteSource(entry);
  if (IsHubRepoId(id, IdContext::kModelOnly) && has_revision) {
    return "pinfile: " + QuoteSource(revision) + " is not a git revision, in " + QuoteSource(entry);
  }
  return "pinfile: not a pin (org/name@revision): " + QuoteSource(entry);
}

}  // namespace

// Which lines are reported depends on how sure the name makes it that this is a pin file:
//   - `*.hfpins` says so: every line that is not a pin is reported, with the valid pins;
//   - `models.txt` is a common name for other lists (prose, a requirements-like list), so its
//     lines are reported only when most of its entries are pins (a pin file with mistakes in
//     it). A file whose entries are mostly not pins is another kind of list: nothing is read
//     from it, so a wrongly matched file never floods the report.
FileFindings FindPinFileReferences(std::string_view file, std::string_view text, bool strict) {
  FindingsBuilder out(file);
  struct Rejected {
    int line;
    std::string why;
  };
  std::vector<Rejected> rejected;
  int pins = 0;
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
      rejected.push_back({line, NotAPin(entry, id, revision, at != std::string_view::npos)});
      continue;
    }
    ++pins;
    // The revision's bytes, for --fix: right after the '@'.
    const SourceSpan revision_at{.line = line,
                                 .column = static_cast<int>(first + at) + 2,
                                 .length = static_cast<int>(revision.size())};
    out.Add("pinfile", line, static_cast<int>(first) + 1, SourceValue::Literal(std::string(id)),
            SourceValue::Literal(std::string(revision), revision_at), IdContext::kModelOnly);
  }
  const bool mostly_pins = pins > static_cast<int>(rejected.size());
  if (!strict && !mostly_pins) return {};
  for (Rejected& r : rejected) out.AddUnresolved(r.line, std::move(r.why));
  return out.Take();
}

}  // namespace hubwatch::audit
