#pragma once

// QueryParams: a request's query string, decoded (percent escapes, '+' as space). Names repeat
// as given; Get() takes the first. Plain value type.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::api {

class QueryParams {
 public:
  // More than this many parameters is refused before they are decoded: no route takes more
  // than a dozen, and a 3 MiB form of "a&a&a..." would otherwise cost ~50 MB of pairs.
  static constexpr size_t kMaxParams = 64;

  // Errors: a malformed percent escape (the message names the parameter); more than kMaxParams.
  static Result<QueryParams> Parse(std::string_view raw);

  std::optional<std::string> Get(std::string_view name) const;
  // Absent -> nullopt; present but not a decimal integer in [min, max] -> an error naming it.
  Result<std::optional<int64_t>> Int(std::string_view name, int64_t min, int64_t max) const;
  // Every parameter, in the order given.
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

}  // namespace hubwatch::api
