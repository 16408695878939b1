// Memory exhaustion inside a diff engine (a file too large to hold: the allocator throws
// std::bad_alloc) is a recorded error change saying so, never "no change" and never an
// exception out of the engine. A binary of its own: it replaces the global operator new with one
// that fails large allocations while a test asks it to.

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <nlohmann/json.hpp>

#include "tracker/diff/config_diff.h"
#include "tracker/diff/special_tokens.h"
#include "tracker/diff/tokenizer_diff.h"

// gcc sees the replaced operator new and delete inlined into the same function and takes
// free() of their memory for a mismatch; they are a matched pair (malloc / free).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {

thread_local size_t fail_from_bytes = 0;  // 0: never fail

}  // namespace

void* operator new(size_t size) {
  if (fail_from_bytes != 0 && size >= fail_from_bytes) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace hubwatch::diff {
namespace {

// Allocations of 1 MiB and more fail while it lives.
class Exhausted {
 public:
  Exhausted() { fail_from_bytes = 1 << 20; }
  ~Exhausted() { fail_from_bytes = 0; }
};

std::string BigConfig() {
  nlohmann::json ids = nlohmann::json::array();
  for (int i = 0; i < 200'000; ++i) ids.push_back(i);
  return nlohmann::json{{"model_type", "llama"}, {"eos_token_id", ids}}.dump();
}

void ExpectOneErrorChange(const std::vector<Change>& changes, const std::string& path) {
  ASSERT_EQ(changes.size(), 1u) << "memory exhaustion read as no change";
  EXPECT_EQ(changes[0].kind, ChangeKind::kError);
  EXPECT_EQ(changes[0].path, path);
  EXPECT_EQ(changes[0].summary, path + ": could not be diffed: std::bad_alloc");
}

TEST(Exhaustion, SpecialTokensRecordAnErrorChange) {
  const SpecialTokenFiles before = {.config = R"({"eos_token_id": 1})"};
  const SpecialTokenFiles after = {.config = BigConfig()};
  ASSERT_EQ(DiffSpecialTokens(before, after).size(), 1u);  // with memory: the effective change
  std::vector<Change> changes;
  {
    Exhausted exhausted;
    changes = DiffSpecialTokens(before, after);
  }
  ExpectOneErrorChange(changes, kSpecialTokensLabel);
}

TEST(Exhaustion, ConfigAndTokenizerEnginesRecordAnErrorChange) {
  const std::optional<std::string> small = R"({"eos_token_id": 1})", big = BigConfig();
  std::vector<Change> config, tokenizer_config;
  {
    Exhausted exhausted;
    config = DiffConfig(small, big);
    tokenizer_config = DiffTokenizerConfig(small, big);
  }
  ExpectOneErrorChange(config, "config.json");
  ExpectOneErrorChange(tokenizer_config, "tokenizer_config.json");
}

}  // namespace
}  // namespace hubwatch::diff
