#include "daemon/config/config_json.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "daemon/config/config.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::config::field {

Error Bad(const std::string& what) { return Error::InvalidInput(what); }

std::string Describe(const nlohmann::json& v) {
  if (v.is_string()) return QuoteForError(v.get_ref<const std::string&>());
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " element(s)";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " key(s)";
  return v.dump();  // a number, a boolean or null: short, and always valid UTF-8
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (base_dir.empty() || path.empty() || path == ":memory:" || path[0] == '/') return path;
  return (std::filesystem::path(base_dir) / path).string();
}

Status CheckKeys(const nlohmann::json& object, const std::string& where,
                 const std::set<std::string>& known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (known.count(it.key())) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    return Bad(where + ": unknown key " + QuoteForError(it.key()) + " (known: " + list + ")");
  }
  return Status::Ok();
}

// An integer in [min, max] (max >= 0); unsigned values above INT64_MAX are out of range.
Result<int64_t> IntInRange(const nlohmann::json& v, const std::string& where, int64_t min,
                           int64_t max) {
  bool in_range = false;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(max) && static_cast<int64_t>(u) >= min;
  } else if (v.is_number_integer()) {
    const int64_t n = v.get<int64_t>();
    in_range = n >= min && n <= max;
  }
  if (!in_range) {
    return Bad(where + " must be an integer between " + std::to_string(min) + " and " +
               std::to_string(max) + ", got " + Describe(v));
  }
  return v.get<int64_t>();
}

Result<int64_t> PositiveInt(const nlohmann::json& v, const std::string& where, int64_t max) {
  return IntInRange(v, where, 1, max);
}

Result<std::string> String(const nlohmann::json& v, const std::string& where) {
  if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
    return Bad(where + " must be a non-empty string, got " + Describe(v));
  }
  return v.get<std::string>();
}

// A path-valued key: a non-empty string, resolved against the config's directory.
Result<std::string> Path(const nlohmann::json& v, const std::string& where,
                         const std::string& base_dir) {
  Result<std::string> p = String(v, where);
  if (!p.ok()) return p.error();
  if (p->find('\0') != std::string::npos) return Bad(where + " must not hold a NUL character");
  return Resolve(base_dir, *p);
}

Result<std::vector<std::string>> RefList(const nlohmann::json& v, const std::string& where) {
  if (!v.is_array() || v.empty() || v.size() > hub::kMaxTrackedRefs) {
    return Bad(where + " must be an array of 1 to " + std::to_string(hub::kMaxTrackedRefs) +
               " branch or tag names");
  }
  std::vector<std::string> refs;
  for (const nlohmann::json& ref : v) {
    Result<std::string> name = String(ref, where + "[]");
    if (!name.ok()) return name.error();
    if (Status valid = hub::ValidateRefName(*name); !valid.ok()) {
      return Bad(where + "[]: " + valid.error().message);
    }
    refs.push_back(*name);
  }
  return refs;
}

}  // namespace hubwatch::config::field
