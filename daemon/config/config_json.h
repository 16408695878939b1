#pragma once

// Typed readers of configuration values, shared by the configuration's parsers (config.cc,
// config_hub.cc, config_repos.cc, follow_rule.cc). Every error is an InvalidInput naming the key (`where`) and quoting at most
// ~90 characters of the offending value.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::config::field {

Error Bad(const std::string& what);

// A value for an error message, never longer than ~90 characters: scalars as JSON (strings cut,
// control characters escaped), arrays and objects by their size.
std::string Describe(const nlohmann::json& v);

// `path` against the configuration's directory (absolute paths and ":memory:" unchanged).
std::string Resolve(const std::string& base_dir, const std::string& path);

// An error naming the first key of `object` that is not in `known`.
Status CheckKeys(const nlohmann::json& object, const std::string& where,
                 const std::set<std::string>& known);

// An integer in [min, max] (max >= 0); unsigned values above INT64_MAX are out of range.
Result<int64_t> IntInRange(const nlohmann::json& v, const std::string& where, int64_t min,
                           int64_t max);
Result<int64_t> PositiveInt(const nlohmann::json& v, const std::string& where, int64_t max);

// A non-empty string.
Result<std::string> String(const nlohmann::json& v, const std::string& where);

// A list of 1 to hub::kMaxTrackedRefs branch or tag names, each checked as the admin API checks
// them (hub::ValidateRefName).
Result<std::vector<std::string>> RefList(const nlohmann::json& v, const std::string& where);

// A path-valued key: a non-empty string without NUL, resolved against the config's directory.
Result<std::string> Path(const nlohmann::json& v, const std::string& where,
                         const std::string& base_dir);

}  // namespace hubwatch::config::field
