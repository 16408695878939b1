#pragma once

// What discovery finds in one file: the Hugging Face model references it can read (a repo id
// and the revision it is pinned to, if any) and the model uses whose id it cannot read because
// the file computes it at run time. Plain value types; the judgement and the output formats of
// `hubwatch audit` are built on them.

#include <compare>
#include <string>
#include <string_view>
#include <vector>

namespace hubwatch::audit {

// How a reference pins its revision.
enum class RevisionKind {
  kFloating,  // no revision: whatever the default branch holds when it runs
  kFullSha,   // a 40-hex commit id: immutable
  kShortSha,  // 7 to 39 hex digits: a commit id prefix
  kName,      // a branch or tag name ("main", "v1.0"): moves when the ref moves
  kComputed,  // a revision is given, but computed at run time: the scanner cannot read it
};

// "floating", "full-sha", "short-sha", "name", "computed": stable, for output formats.
std::string_view RevisionKindName(RevisionKind kind);

// Where a literal is written: `length` bytes of line `line` from `column` (both 1-based, in
// bytes). Either exactly the literal's bytes or the shell word that holds it; length 0: unknown.
struct SourceSpan {
  int line = 0;
  int column = 0;
  int length = 0;

  friend auto operator<=>(const SourceSpan&, const SourceSpan&) = default;
};

struct ModelReference {
  std::string file{};      // relative to the scan root; raw bytes of the name (escape to print)
  int line = 0;            // 1-based, of the token that names the model where it is used
  int column = 0;          // 1-based, in bytes
  std::string repo_id{};   // Hub syntax only: "org/name" or a bare canonical name ("gpt2")
  std::string revision{};  // empty when floating or computed; else [A-Za-z0-9._/+-] only
  RevisionKind revision_kind = RevisionKind::kFloating;
  // How it was recognised, a short stable string: "python:from_pretrained", "yaml:base_model",
  // "shell:vllm-serve", "pinfile", ...
  std::string recognised_by{};
  // Where the revision literal is written (several places: a value every call passes alike);
  // empty when no one place holds it (computed, concatenated, or not recorded). --fix rewrites
  // only these spans.
  std::vector<SourceSpan> revision_at{};

  friend bool operator==(const ModelReference&, const ModelReference&) = default;
};

// A model use whose repo id the file computes at run time (an f-string, an environment
// variable, a function parameter, ...): reported, never guessed.
struct Unresolved {
  std::string file{};
  int line = 0;
  std::string why{};  // one line, safe to print: quoted source text is clipped and escaped

  friend bool operator==(const Unresolved&, const Unresolved&) = default;
};

struct FileFindings {
  std::vector<ModelReference> references{};  // sorted by (line, column)
  std::vector<Unresolved> unresolved{};      // sorted by line
};

}  // namespace hubwatch::audit
