#include "config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tracker/hub/repo_id.h"

namespace hubwatch::cli {
namespace {

Error Bad(const std::string& what) { return Error::InvalidInput(what); }

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
    return Bad(where + ": unknown key \"" + it.key() + "\" (known: " + list + ")");
  }
  return Status::Ok();
}

Result<int64_t> PositiveInt(const nlohmann::json& v, const std::string& where, int64_t max) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max) {
    return Bad(where + " must be an integer between 1 and " + std::to_string(max) + ", got " +
               v.dump());
  }
  return v.get<int64_t>();
}

Result<std::string> String(const nlohmann::json& v, const std::string& where) {
  if (!v.is_string() || v.get<std::string>().empty()) {
    return Bad(where + " must be a non-empty string, got " + v.dump());
  }
  return v.get<std::string>();
}

}  // namespace

Result<DaemonConfig> ParseConfig(std::string_view text, const std::string& base_dir) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Bad(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) return Bad("the configuration must be a JSON object");
  if (Status s = CheckKeys(j, "config", {"store", "hub", "repos", "poll"}); !s.ok()) {
    return s.error();
  }
  DaemonConfig c;
  if (j.contains("store")) {
    Result<std::string> s = String(j["store"], "store");
    if (!s.ok()) return s.error();
    c.store = *s;
  }
  c.store = Resolve(base_dir, c.store);

  if (j.contains("hub")) {
    const nlohmann::json& h = j["hub"];
    if (!h.is_object()) return Bad("hub must be an object");
    if (Status s = CheckKeys(
            h, "hub", {"endpoint", "token_file", "max_concurrent", "max_safetensors_header_bytes"});
        !s.ok()) {
      return s.error();
    }
    if (h.contains("endpoint")) {
      Result<std::string> e = String(h["endpoint"], "hub.endpoint");
      if (!e.ok()) return e.error();
      c.hub.endpoint = *e;
    }
    if (h.contains("token_file")) {
      Result<std::string> t = String(h["token_file"], "hub.token_file");
      if (!t.ok()) return t.error();
      c.hub.token_file = Resolve(base_dir, *t);
    }
    if (h.contains("max_concurrent")) {
      Result<int64_t> n = PositiveInt(h["max_concurrent"], "hub.max_concurrent", 1024);
      if (!n.ok()) return n.error();
      c.hub.max_concurrent = static_cast<int>(*n);
    }
    if (h.contains("max_safetensors_header_bytes")) {
      Result<int64_t> n = PositiveInt(h["max_safetensors_header_bytes"],
                                      "hub.max_safetensors_header_bytes", 100'000'000);
      if (!n.ok()) return n.error();
      c.hub.max_safetensors_header_bytes = static_cast<uint64_t>(*n);
    }
  }

  if (j.contains("repos")) {
    if (!j["repos"].is_array()) return Bad("repos must be an array");
    std::set<std::string> seen;
    for (size_t i = 0; i < j["repos"].size(); ++i) {
      const nlohmann::json& r = j["repos"][i];
      const std::string where = "repos[" + std::to_string(i) + "]";
      if (!r.is_object()) return Bad(where + " must be an object");
      if (Status s = CheckKeys(r, where, {"id", "refs"}); !s.ok()) return s.error();
      RepoConfig repo;
      Result<std::string> id = String(r.value("id", nlohmann::json()), where + ".id");
      if (!id.ok()) return id.error();
      if (Status v = hub::ValidateRepoId(*id); !v.ok()) {
        return Bad(where + ".id: " + v.error().message);
      }
      repo.id = *id;
      if (!seen.insert(repo.id).second) return Bad(where + ": " + repo.id + " is listed twice");
      if (r.contains("refs")) {
        if (!r["refs"].is_array() || r["refs"].empty()) {
          return Bad(where + ".refs must be a non-empty array of branch or tag names");
        }
        repo.refs.clear();
        for (const nlohmann::json& ref : r["refs"]) {
          Result<std::string> name = String(ref, where + ".refs[]");
          if (!name.ok()) return name.error();
          repo.refs.push_back(*name);
        }
      }
      c.repos.push_back(std::move(repo));
    }
  }

  if (j.contains("poll")) {
    const nlohmann::json& p = j["poll"];
    if (!p.is_object()) return Bad("poll must be an object");
    if (Status s = CheckKeys(p, "poll", {"interval_s", "advise_cosmetic"}); !s.ok()) {
      return s.error();
    }
    if (p.contains("interval_s")) {
      Result<int64_t> n = PositiveInt(p["interval_s"], "poll.interval_s", 30 * 24 * 3600);
      if (!n.ok()) return n.error();
      c.poll.interval_s = *n;
    }
    if (p.contains("advise_cosmetic")) {
      if (!p["advise_cosmetic"].is_boolean()) return Bad("poll.advise_cosmetic must be a boolean");
      c.poll.advise_cosmetic = p["advise_cosmetic"].get<bool>();
    }
  }
  return c;
}

Result<DaemonConfig> LoadConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Io(path + ": cannot open the configuration file");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string dir = std::filesystem::path(path).parent_path().string();
  Result<DaemonConfig> c = ParseConfig(text.str(), dir);
  if (!c.ok()) return Error{c.error().code, path + ": " + c.error().message};
  c->path = path;
  return c;
}

Result<std::optional<std::string>> ReadTokenFile(const DaemonConfig& config) {
  if (!config.hub.token_file) return std::optional<std::string>();
  std::ifstream in(*config.hub.token_file, std::ios::binary);
  if (!in) return Error::Io(*config.hub.token_file + ": cannot read the token file");
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front())))
    token.erase(0, 1);
  if (token.empty())
    return Error::InvalidInput(*config.hub.token_file + ": the token file is empty");
  return std::optional<std::string>(token);
}

}  // namespace hubwatch::cli
