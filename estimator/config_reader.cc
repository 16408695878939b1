#include "estimator/config_reader.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "estimator/format.h"

namespace hubwatch {
namespace {

std::string KeyName(Keys keys) { return keys.size() ? std::string(*keys.begin()) : "?"; }

}  // namespace

ConfigReader::ConfigReader(const nlohmann::json& config, int depth)
    : config_(config), depth_(depth) {}

const nlohmann::json* ConfigReader::Find(Keys keys) const { return FindKey(keys).second; }

std::pair<std::string_view, const nlohmann::json*> ConfigReader::FindKey(Keys keys) const {
  for (std::string_view key : keys) {
    auto it = config_.find(key);
    if (it != config_.end() && !it->is_null()) return {key, &*it};
  }
  return {{}, nullptr};
}

std::string_view WithoutConfigPrefix(std::string_view message) {
  constexpr std::string_view kPrefix = "config.json: ";
  if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
  return message;
}

void ConfigReader::Fail(std::string message) {
  if (!error_) {
    error_ = Error::InvalidInput("config.json: " + std::string(WithoutConfigPrefix(message)));
  }
}

void ConfigReader::Fail(const Error& error) {
  if (error_) return;
  if (error.code == ErrorCode::kUnsupported) {
    error_ = error;
  } else {
    Fail(error.message);
    error_->code = error.code;
  }
}

std::optional<int64_t> ConfigReader::ReadInteger(Keys keys, int64_t min, int64_t max) {
  auto [key, v] = FindKey(keys);
  if (!v) return std::nullopt;
  const std::string name(key);
  int64_t value = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      Fail(name + " " + QuoteJson(*v) + " is absurd (limit " + std::to_string(max) + ")");
      return min;
    }
    value = v->get<int64_t>();
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) &&
             v->get<double>() == std::floor(v->get<double>()) &&
             std::abs(v->get<double>()) < 9e18) {
    value = static_cast<int64_t>(v->get<double>());  // 4096.0 is still 4096
  } else {
    Fail(name + " must be an integer, got " + QuoteJson(*v));
    return min;
  }
  if (value < min) {
    Fail(name + " must be " + (min > 0 ? "a positive integer" : "a non-negative integer") +
         ", got " + std::to_string(value));
    return min;
  }
  if (value > max) {
    Fail(name + " " + std::to_string(value) + " is absurd (limit " + std::to_string(max) + ")");
    return min;
  }
  return value;
}

int64_t ConfigReader::Positive(Keys keys, int64_t max, std::optional<int64_t> fallback,
                               std::string_view fallback_why) {
  if (std::optional<int64_t> v = ReadInteger(keys, 1, max)) return *v;
  if (!fallback) {
    Fail("missing required key " + KeyName(keys));
    return 1;
  }
  if (!fallback_why.empty()) Note(std::string(fallback_why));
  return *fallback;
}

int64_t ConfigReader::NonNegative(Keys keys, int64_t max, int64_t fallback,
                                  std::string_view fallback_why) {
  if (std::optional<int64_t> v = ReadInteger(keys, 0, max)) return *v;
  if (!fallback_why.empty()) Note(std::string(fallback_why));
  return fallback;
}

std::optional<int64_t> ConfigReader::OptionalPositive(Keys keys, int64_t max) {
  return ReadInteger(keys, 1, max);
}

bool ConfigReader::Flag(Keys keys, bool fallback, std::string_view fallback_why) {
  const nlohmann::json* v = Find(keys);
  if (!v) {
    if (!fallback_why.empty()) Note(std::string(fallback_why));
    return fallback;
  }
  if (!v->is_boolean()) {
    Fail(KeyName(keys) + " must be true or false, got " + QuoteJson(*v));
    return fallback;
  }
  return v->get<bool>();
}

double ConfigReader::Probability(Keys keys) {
  const nlohmann::json* v = Find(keys);
  if (!v) return 0;
  if (!v->is_number() || !(v->get<double>() >= 0 && v->get<double>() <= 1)) {
    Fail(KeyName(keys) + " must be a number from 0 to 1, got " + QuoteJson(*v));
    return 0;
  }
  return v->get<double>();
}

std::string ConfigReader::String(Keys keys, std::string fallback) {
  const nlohmann::json* v = Find(keys);
  if (!v) return fallback;
  if (!v->is_string()) {
    Fail(KeyName(keys) + " must be a string, got " + QuoteJson(*v));
    return fallback;
  }
  return v->get<std::string>();
}

std::vector<int64_t> ConfigReader::IntList(Keys keys) {
  const nlohmann::json* v = Find(keys);
  std::vector<int64_t> out;
  if (!v) return out;
  auto take = [&](const nlohmann::json& item) {
    if (item.is_number_unsigned() && item.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      Fail(KeyName(keys) + " holds " + item.dump() + ", which is absurd");
    } else if (item.is_number_integer()) {
      out.push_back(item.get<int64_t>());
    } else if (!item.is_null()) {
      Fail(KeyName(keys) + " must hold integers, got " + QuoteJson(item));
    }
  };
  if (v->is_array()) {
    for (const nlohmann::json& item : *v) take(item);
  } else {
    take(*v);
  }
  return out;
}

}  // namespace hubwatch
