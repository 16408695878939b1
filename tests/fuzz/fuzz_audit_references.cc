// libFuzzer target: `hubwatch audit`'s discovery (daemon/audit/find_references.h) on any bytes
// as any file kind it reads - the tree being audited is untrusted. The first byte picks the file
// name (so the kind); the rest is the file. Invariants: no crash, no hang; every reference's
// repo id is Hub syntax ([A-Za-z0-9._-], at most one '/'), its revision is printable ASCII
// without spaces, its line and column lie inside the text, and the findings are sorted.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/audit/find_references.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr std::string_view kNames[] = {"train.py", "config.yaml", "config.json", "pyproject.toml",
                                       "run.sh",   "Dockerfile",  "Makefile",    "models.hfpins",
                                       "models.txt"};

bool HubIdByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view name = kNames[data[0] % std::size(kNames)];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const hubwatch::audit::FileFindings found = hubwatch::audit::FindReferences(name, text);
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  int last_line = 0, last_column = 0;
  for (const hubwatch::audit::ModelReference& r : found.references) {
    FUZZ_CHECK(!r.repo_id.empty(), "an empty repo id");
    int slashes = 0;
    for (char c : r.repo_id) {
      slashes += c == '/';
      FUZZ_CHECK(c == '/' || HubIdByte(c), "a repo id byte outside Hub syntax");
    }
    FUZZ_CHECK(slashes <= 1, "a repo id with more than one '/'");
    for (char c : r.revision) FUZZ_CHECK(c > 0x20 && c < 0x7f, "a revision byte not printable");
    FUZZ_CHECK(r.line >= 1 && static_cast<size_t>(r.line) <= lines, "a line outside the text");
    FUZZ_CHECK(r.column >= 1 && static_cast<size_t>(r.column) <= text.size() + 1,
               "a column outside the text");
    FUZZ_CHECK(r.line > last_line || (r.line == last_line && r.column >= last_column),
               "references out of order");
    last_line = r.line;
    last_column = r.column;
  }
  for (const hubwatch::audit::Unresolved& u : found.unresolved) {
    FUZZ_CHECK(u.line >= 1 && static_cast<size_t>(u.line) <= lines, "an unresolved line outside");
  }
  return 0;
}
