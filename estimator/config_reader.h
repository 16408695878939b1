#pragma once

// ConfigReader: typed, validated reads of a Hugging Face config.json.
//
// Every read names the keys it accepts (first present, non-null one wins, so legacy aliases
// such as falcon's "n_head" work), validates the value (type, range, a per-field sanity limit),
// and records a note whenever it falls back to a default, so the estimate can say which numbers
// were assumed rather than read. The first invalid value becomes error(); later reads still
// return usable fallbacks so callers can finish building and check ok() once.
//
// Not thread-safe (it accumulates notes); one reader per build. Borrows the json, which must
// outlive the reader.

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch {

// `message` without a leading "config.json: " (a part's reader error quoted by its parent).
std::string_view WithoutConfigPrefix(std::string_view message);

using Keys = std::initializer_list<std::string_view>;

// Sanity limits: anything larger is not a model we can reason about, and keeping every dimension
// below these keeps the exact arithmetic far from 64-bit overflow.
inline constexpr int64_t kMaxVocab = int64_t{1} << 24;  // 16.7M tokens
inline constexpr int64_t kMaxWidth = int64_t{1} << 20;  // hidden / intermediate / head_dim
inline constexpr int64_t kMaxLayers = 4096;
inline constexpr int64_t kMaxHeads = 65536;
inline constexpr int64_t kMaxExperts = 65536;
inline constexpr int64_t kMaxPositions = int64_t{1} << 30;

class ConfigReader {
 public:
  // depth: how deep in a composite config this one sits (0: config.json itself; 1: its
  // text_config ...), which composite builders pass on to BuildPart.
  explicit ConfigReader(const nlohmann::json& config, int depth = 0);
  int depth() const { return depth_; }

  // The value of the first key present and non-null, or nullptr.
  const nlohmann::json* Find(Keys keys) const;
  bool Has(Keys keys) const { return Find(keys) != nullptr; }

  // A positive integer <= max. Absent: `fallback` (noted with `fallback_why`), or an error when
  // there is no fallback.
  int64_t Positive(Keys keys, int64_t max, std::optional<int64_t> fallback = std::nullopt,
                   std::string_view fallback_why = {});
  // A non-negative integer <= max, with a fallback when absent.
  int64_t NonNegative(Keys keys, int64_t max, int64_t fallback, std::string_view fallback_why = {});
  // Present: a positive integer <= max; absent or null: nullopt (not an error, not noted).
  std::optional<int64_t> OptionalPositive(Keys keys, int64_t max);
  bool Flag(Keys keys, bool fallback, std::string_view fallback_why = {});
  // A probability in [0, 1] (a dropout rate); absent or null: 0.
  double Probability(Keys keys);
  std::string String(Keys keys, std::string fallback);
  // A list of integers (or one integer) such as eos_token_id; absent -> empty.
  std::vector<int64_t> IntList(Keys keys);

  void Fail(std::string message);
  // Fails with `error`, keeping its code (a part that is not modelled stays kUnsupported); an
  // error from a part's reader ("config.json: ...") is not prefixed twice.
  void Fail(const Error& error);
  void Note(std::string note) { notes_.push_back(std::move(note)); }

  bool ok() const { return !error_.has_value(); }
  // REQUIRES: !ok()
  const Error& error() const { return *error_; }
  std::vector<std::string> TakeNotes() { return std::move(notes_); }
  const nlohmann::json& json() const { return config_; }

 private:
  std::pair<std::string_view, const nlohmann::json*> FindKey(Keys keys) const;
  std::optional<int64_t> ReadInteger(Keys keys, int64_t min, int64_t max);

  const nlohmann::json& config_;
  int depth_ = 0;
  std::vector<std::string> notes_;
  std::optional<Error> error_;
};

}  // namespace hubwatch
