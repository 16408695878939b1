// Tokenizer engine benchmark: a synthetic 256k-token tokenizer.json (~17 MB), diffed against
// revisions that change a small section, the vocab and merges, or only the formatting; and,
// for reference, what nlohmann_json alone needs to read both files.

#include <benchmark/benchmark.h>

#include "tests/diff/synthetic_tokenizer.h"
#include "tracker/diff/special_tokens.h"
#include "tracker/diff/tokenizer_diff.h"

namespace {

using hubwatch::testing::SyntheticTokenizerJson;
using hubwatch::testing::SyntheticTokenizerSpec;

const std::string& Base() {
  static const std::string text = SyntheticTokenizerJson({});
  return text;
}

void RunDiff(benchmark::State& state, const std::string& after, size_t expected_changes) {
  const std::optional<std::string> before = Base();
  const std::optional<std::string> revised = after;
  for (auto _ : state) {
    std::vector<hubwatch::diff::Change> changes =
        hubwatch::diff::DiffTokenizerJson(before, revised);
    if (changes.size() != expected_changes) state.SkipWithError("unexpected change count");
    benchmark::DoNotOptimize(changes);
  }
  state.counters["MB_per_side"] = static_cast<double>(Base().size()) / 1e6;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(Base().size() + after.size()));
}

// The common case: the post_processor gains a BOS template; vocab and merges byte-identical.
void BM_TokenizerDiff_PostProcessorOnly(benchmark::State& state) {
  static const std::string after = SyntheticTokenizerJson({.bos_template = true});
  RunDiff(state, after, 1);
}
BENCHMARK(BM_TokenizerDiff_PostProcessorOnly)->Unit(benchmark::kMillisecond);

// The worst case: vocab and merges differ, so both are read in full and compared.
void BM_TokenizerDiff_VocabAndMerges(benchmark::State& state) {
  static const std::string after = SyntheticTokenizerJson(
      {.tokens_appended = 1000, .tokens_renumbered = 100, .merges_appended = 1000});
  RunDiff(state, after, 1);
}
BENCHMARK(BM_TokenizerDiff_VocabAndMerges)->Unit(benchmark::kMillisecond);

// Every byte moves (re-serialized compactly with sorted keys) but nothing changes: all sections
// are parsed and compared, and the answer is "no change".
void BM_TokenizerDiff_ReformattedOnly(benchmark::State& state) {
  static const std::string after = nlohmann::json::parse(Base()).dump();
  RunDiff(state, after, 0);
}
BENCHMARK(BM_TokenizerDiff_ReformattedOnly)->Unit(benchmark::kMillisecond);

// The effective special tokens of both revisions (tokenizer.json scanned, added_tokens and the
// post_processor parsed, EOS found among the added tokens: the vocab is not read).
void BM_SpecialTokens_BothSides(benchmark::State& state) {
  static const std::string after = SyntheticTokenizerJson({.bos_template = true});
  const std::string tokenizer_config =
      R"({"added_tokens_decoder": {}, "bos_token": "<|reserved_0|>",
                                           "eos_token": "<|reserved_1|>"})";
  const hubwatch::diff::SpecialTokenFiles before_files = {
      .generation_config = R"({"eos_token_id": 356001})",
      .tokenizer_config = tokenizer_config,
      .tokenizer_json = Base()};
  hubwatch::diff::SpecialTokenFiles after_files = before_files;
  after_files.tokenizer_json = after;
  for (auto _ : state) {
    std::vector<hubwatch::diff::Change> changes =
        hubwatch::diff::DiffSpecialTokens(before_files, after_files);
    if (changes.size() != 1) state.SkipWithError("expected the BOS change");
    benchmark::DoNotOptimize(changes);
  }
}
BENCHMARK(BM_SpecialTokens_BothSides)->Unit(benchmark::kMillisecond);

// Reference: nlohmann DOM parse of both sides (no diff at all).
void BM_Reference_NlohmannDomParseBoth(benchmark::State& state) {
  static const std::string after = SyntheticTokenizerJson({.bos_template = true});
  for (auto _ : state) {
    nlohmann::json a = nlohmann::json::parse(Base());
    nlohmann::json b = nlohmann::json::parse(after);
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_Reference_NlohmannDomParseBoth)->Unit(benchmark::kMillisecond);

// Reference: nlohmann's parser without building a DOM (json::accept, the SAX path with a
// validating no-op handler) on both sides.
void BM_Reference_NlohmannSaxAcceptBoth(benchmark::State& state) {
  static const std::string after = SyntheticTokenizerJson({.bos_template = true});
  for (auto _ : state) {
    benchmark::DoNotOptimize(nlohmann::json::accept(Base()));
    benchmark::DoNotOptimize(nlohmann::json::accept(after));
  }
}
BENCHMARK(BM_Reference_NlohmannSaxAcceptBoth)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
