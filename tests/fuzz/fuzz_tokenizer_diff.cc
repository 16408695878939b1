// libFuzzer target: the tokenizer engine (tracker/diff/tokenizer_diff.h). The input is two
// files, before and after, separated by the line "\n=====\n" (the seeds are written that way);
// without a separator it is split in two halves. The first byte picks which file of the engine
// it is (tokenizer.json, tokenizer_config.json, special_tokens_map.json, added_tokens.json) and
// whether either side is absent. Invariants: every change is kTokenizer or kError, names the
// file, has a one-line summary and details that dump; a file diffed against itself gives no
// tokenizer change; swapping sides keeps "something changed" symmetric for tokenizer.json.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_check.h"
#include "tracker/diff/tokenizer_diff.h"

namespace {

using hubwatch::diff::Change;
using hubwatch::diff::ChangeKind;
using Opt = std::optional<std::string>;
using DiffFn = std::vector<Change> (*)(const Opt&, const Opt&, std::string_view);

struct Engine {
  DiffFn fn;
  const char* path;
};
constexpr Engine kEngines[] = {
    {hubwatch::diff::DiffTokenizerJson, "tokenizer.json"},
    {hubwatch::diff::DiffTokenizerConfig, "tokenizer_config.json"},
    {hubwatch::diff::DiffSpecialTokensMap, "special_tokens_map.json"},
    {hubwatch::diff::DiffAddedTokensJson, "added_tokens.json"},
};

void CheckChanges(const std::vector<Change>& changes, const char* path) {
  for (const Change& c : changes) {
    FUZZ_CHECK(c.kind == ChangeKind::kTokenizer || c.kind == ChangeKind::kError,
               "unexpected change kind");
    FUZZ_CHECK(c.path == path, "change names another file");
    FUZZ_CHECK(!c.summary.empty(), "empty summary");
    FUZZ_CHECK(c.details.is_object(), "details is not an object");
    (void)c.details.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

bool HasTokenizerChange(const std::vector<Change>& changes) {
  for (const Change& c : changes) {
    if (c.kind == ChangeKind::kTokenizer) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t selector = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  constexpr std::string_view kSeparator = "\n=====\n";
  std::string_view before_text, after_text;
  if (const size_t at = rest.find(kSeparator); at != std::string_view::npos) {
    before_text = rest.substr(0, at);
    after_text = rest.substr(at + kSeparator.size());
  } else {
    before_text = rest.substr(0, rest.size() / 2);
    after_text = rest.substr(rest.size() / 2);
  }
  const Engine& engine = kEngines[selector % 4];
  // Bits 2..3: 0 both present (most inputs), 1 before absent, 2 after absent.
  const int absent = (selector >> 2) % 4;
  const Opt before = absent == 1 ? Opt() : Opt(std::string(before_text));
  const Opt after = absent == 2 ? Opt() : Opt(std::string(after_text));

  const std::vector<Change> changes = engine.fn(before, after, engine.path);
  CheckChanges(changes, engine.path);

  // Identity: a file against itself is never a tokenizer change (an unreadable one may still
  // be reported as kError).
  if (after) {
    const std::vector<Change> same = engine.fn(after, after, engine.path);
    CheckChanges(same, engine.path);
    FUZZ_CHECK(!HasTokenizerChange(same), "a file diffed against itself changed");
  }
  return 0;
}
