#pragma once

// The shields.io endpoint badge rules, checked independently of the
// server's code: returns "" when `badge` is valid, else what is wrong.

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

namespace hubwatch::api::testing {

inline std::string ShieldsEndpointProblem(const nlohmann::json& badge) {
  if (!badge.is_object()) return "not an object";
  static const std::set<std::string> kAllowed = {
      "schemaVersion", "label",     "message",      "color",       "labelColor",
      "isError",       "namedLogo", "logoSvg",      "logoColor",   "logoSize",
      "logoWidth",     "style",     "cacheSeconds", "logoPosition"};
  for (const auto& [key, value] : badge.items()) {
    if (!kAllowed.count(key)) return "unknown key " + key;
  }
  if (!badge.contains("schemaVersion") || badge["schemaVersion"] != 1) return "schemaVersion != 1";
  if (!badge.contains("label") || !badge["label"].is_string()) return "label missing";
  if (!badge.contains("message") || !badge["message"].is_string() ||
      badge["message"].get<std::string>().empty()) {
    return "message missing or empty";
  }
  if (badge.contains("color")) {
    static const std::set<std::string> kNamed = {
        "brightgreen", "green",    "yellow",        "yellowgreen", "orange",    "red",
        "blue",        "grey",     "gray",          "lightgrey",   "lightgray", "success",
        "important",   "critical", "informational", "inactive"};
    static const std::regex kHex("#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})");
    if (!badge["color"].is_string()) return "color not a string";
    const std::string c = badge["color"];
    if (!kNamed.count(c) && !std::regex_match(c, kHex)) return "color " + c + " is not known";
  }
  if (badge.contains("isError") && !badge["isError"].is_boolean()) return "isError not boolean";
  if (badge.contains("cacheSeconds") &&
      (!badge["cacheSeconds"].is_number_integer() || badge["cacheSeconds"].get<int64_t>() < 0)) {
    return "cacheSeconds not an integer >= 0";
  }
  for (const char* logo_only : {"logoColor", "logoSize"}) {
    if (badge.contains(logo_only) && !badge.contains("namedLogo")) {
      return std::string(logo_only) + " without namedLogo";
    }
  }
  if (badge.contains("namedLogo") && badge.contains("logoSvg")) return "namedLogo and logoSvg";
  return "";
}

}  // namespace hubwatch::api::testing
