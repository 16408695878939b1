#pragma once

// FindingsBuilder: what every language scanner hands its candidates to. It applies the rules
// that are the same everywhere - a local path is skipped silently, anything that is not Hub
// syntax is dropped, a computed id becomes an Unresolved entry, a revision is checked and
// classified - so each scanner only says where it saw a model and what the source wrote there.
// Not thread-safe; one per file.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/audit/hub_id.h"
#include "daemon/audit/reference.h"

namespace hubwatch::audit {

// What a scanner read for a model id or a revision at one place in the source.
struct SourceValue {
  enum class Kind { kAbsent, kLiteral, kComputed };
  Kind kind = Kind::kAbsent;
  std::string text;  // kLiteral: the value as written (decoded from quotes)
  std::string why;   // kComputed: where it comes from ("an f-string"); quoted text escaped
  std::vector<SourceSpan> at;  // kLiteral: where it is written (empty: not one known place)

  static SourceValue Absent() { return {}; }
  static SourceValue Literal(std::string text) { return {Kind::kLiteral, std::move(text), {}, {}}; }
  // A literal written at `span` (one of length 0 records no place).
  static SourceValue Literal(std::string text, SourceSpan span) {
    SourceValue v = Literal(std::move(text));
    if (span.length > 0) v.at.push_back(span);
    return v;
  }
  static SourceValue Computed(std::string why) { return {Kind::kComputed, {}, std::move(why), {}}; }
};

// Source text quoted in a `why`: clipped and with every byte outside printable ASCII escaped.
std::string QuoteSource(std::string_view text);

class FindingsBuilder {
 public:
  explicit FindingsBuilder(std::string_view file) : file_(file) {}

  // A model named at (line, column) by `id`, pinned by `revision`, recognised as
  // `recognised_by`. Absent ids add nothing; computed ids add an Unresolved entry.
  void Add(std::string_view recognised_by, int line, int column, const SourceValue& id,
           const SourceValue& revision, IdContext context);
  void AddUnresolved(int line, std::string why);

  // The findings, sorted; leaves the builder empty.
  FileFindings Take();

 private:
  std::string file_;
  FileFindings findings_;
};

}  // namespace hubwatch::audit
