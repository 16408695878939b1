#include "tests/fakehub/fixture_loader.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/fakehub/gguf_blob.h"

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Io("cannot read " + path.string());
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

Result<json> ReadJson(const fs::path& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.error();
  json root = json::parse(*text, nullptr, false);
  if (root.is_discarded()) return Error::InvalidInput(path.string() + ": invalid JSON");
  return root;
}

// A file source: "relative/path" (stored file), {"safetensors": "manifest.json"},
// {"gguf": "manifest.json"} or {"lfs": {"size": N, "sha256": "...", "seed": S}}.
Result<BlobPtr> LoadSource(const fs::path& base, const json& source, const std::string& where) {
  if (source.is_string()) {
    Result<std::string> content = ReadFile(base / source.get<std::string>());
    if (!content.ok()) return Error::Io(where + ": " + content.error().message);
    return MakeInlineBlob(std::move(content).value());
  }
  if (source.is_object() && source.contains("safetensors") && source["safetensors"].is_string()) {
    Result<SafetensorsManifest> manifest =
        LoadSafetensorsManifest(base / source["safetensors"].get<std::string>());
    if (!manifest.ok()) return Error::InvalidInput(where + ": " + manifest.error().message);
    Result<BlobPtr> blob = MakeSafetensorsBlob(*manifest);
    if (!blob.ok()) return Error::InvalidInput(where + ": " + blob.error().message);
    return blob;
  }
  if (source.is_object() && source.contains("gguf") && source["gguf"].is_string()) {
    const fs::path manifest = base / source["gguf"].get<std::string>();
    Result<std::string> text = ReadFile(manifest);
    if (!text.ok()) return Error::Io(where + ": " + text.error().message);
    Result<BlobPtr> blob = MakeGgufBlob(*text);
    if (!blob.ok()) {
      return Error::InvalidInput(where + ": " + manifest.string() + ": " + blob.error().message);
    }
    return blob;
  }
  if (source.is_object() && source.contains("lfs") && source["lfs"].is_object()) {
    const json& lfs = source["lfs"];
    if (!lfs.value("size", json()).is_number_unsigned() ||
        !lfs.value("sha256", json()).is_string()) {
      return Error::InvalidInput(where + ": lfs needs size and sha256");
    }
    return MakeLfsBlob(lfs["size"].get<uint64_t>(), lfs["sha256"].get<std::string>(),
                       lfs.value("seed", uint64_t{0}));
  }
  return Error::InvalidInput(
      where + ": a source is a path, {\"safetensors\": ...}, {\"gguf\": ...} or {\"lfs\": ...}");
}

std::vector<std::string> Strings(const json& obj, const char* key) {
  std::vector<std::string> out;
  if (auto it = obj.find(key); it != obj.end() && it->is_array()) {
    for (const json& v : *it) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

}  // namespace

Result<SafetensorsManifest> LoadSafetensorsManifest(const fs::path& path) {
  Result<json> root = ReadJson(path);
  if (!root.ok()) return root.error();
  const json& m = *root;
  SafetensorsManifest manifest;
  manifest.dtype = m.value("dtype", std::string("BF16"));
  manifest.seed = m.value("seed", uint64_t{0});
  manifest.sha256 = m.value("sha256", std::string());
  if (auto it = m.find("size"); it != m.end() && it->is_number_unsigned()) {
    manifest.declared_size = it->get<uint64_t>();
  }
  if (auto it = m.find("metadata"); it != m.end() && it->is_object()) {
    for (auto e = it->begin(); e != it->end(); ++e) {
      if (!e->is_string())
        return Error::InvalidInput(path.string() + ": metadata values are strings");
      manifest.metadata[e.key()] = e->get<std::string>();
    }
  }
  auto tensors = m.find("tensors");
  if (tensors == m.end() || !tensors->is_array()) {
    return Error::InvalidInput(path.string() + ": missing \"tensors\" array");
  }
  for (const json& t : *tensors) {
    if (!t.is_object() || !t.value("name", json()).is_string() ||
        !t.value("shape", json()).is_array()) {
      return Error::InvalidInput(path.string() + ": each tensor needs name and shape");
    }
    SafetensorsTensorSpec spec;
    spec.name = t["name"].get<std::string>();
    spec.dtype = t.value("dtype", std::string());
    for (const json& d : t["shape"]) {
      if (!d.is_number_unsigned())
        return Error::InvalidInput(path.string() + ": bad shape in " + spec.name);
      spec.shape.push_back(d.get<uint64_t>());
    }
    manifest.tensors.push_back(std::move(spec));
  }
  return manifest;
}

Result<Repo> LoadFixtureRepo(const fs::path& repo_json) {
  Result<json> root = ReadJson(repo_json);
  if (!root.ok()) return root.error();
  const json& r = *root;
  const fs::path base = repo_json.parent_path();
  const std::string where = repo_json.string();
  if (!r.value("id", json()).is_string()) return Error::InvalidInput(where + ": missing \"id\"");
  Repo meta;
  meta.id = r["id"].get<std::string>();
  meta.internal_id = r.value("_id", std::string());
  meta.created_at = r.value("created_at", std::string());
  if (auto g = r.find("gated"); g != r.end() && g->is_string()) meta.gated = g->get<std::string>();
  meta.disabled = r.value("disabled", false);
  meta.is_private = r.value("private", false);
  meta.pipeline_tag = r.value("pipeline_tag", std::string());
  meta.library_name = r.value("library_name", std::string());
  meta.tags = Strings(r, "tags");
  meta.renamed_from = Strings(r, "renamed_from");
  meta.downloads = r.value("downloads", uint64_t{0});
  meta.likes = r.value("likes", uint64_t{0});
  RepoBuilder builder(std::move(meta));

  auto commits = r.find("commits");
  if (commits == r.end() || !commits->is_array() || commits->empty()) {
    return Error::InvalidInput(where + ": \"commits\" must be a non-empty array");
  }
  for (const json& c : *commits) {
    RepoBuilder::CommitSpec spec;
    spec.id = c.value("id", std::string());
    spec.title = c.value("title", std::string());
    spec.message = c.value("message", std::string());
    spec.authors = Strings(c, "authors");
    spec.date = c.value("date", std::string());
    const std::string at = where + " commit \"" + spec.title + "\"";
    for (const char* op : {"add", "change"}) {
      auto files = c.find(op);
      if (files == c.end()) continue;
      if (!files->is_object()) return Error::InvalidInput(at + ": \"" + op + "\" is a map");
      for (auto f = files->begin(); f != files->end(); ++f) {
        Result<BlobPtr> blob = LoadSource(base, *f, at + " " + f.key());
        if (!blob.ok()) return blob.error();
        (std::string(op) == "add" ? spec.add : spec.change)[f.key()] = *blob;
      }
    }
    spec.remove = Strings(c, "delete");
    Status added = builder.AddCommit(std::move(spec));
    if (!added.ok()) return added.error();
  }
  if (auto refs = r.find("refs"); refs != r.end() && refs->is_object()) {
    for (const char* kind : {"tags", "branches"}) {
      auto list = refs->find(kind);
      if (list == refs->end() || !list->is_object()) continue;
      for (auto e = list->begin(); e != list->end(); ++e) {
        if (!e->is_string()) return Error::InvalidInput(where + ": refs map names to commit ids");
        Status ok = builder.AddRef(std::string(kind) == "tags", e.key(), e->get<std::string>());
        if (!ok.ok()) return ok.error();
      }
    }
  }
  return std::move(builder).Build();
}

Result<std::vector<Repo>> LoadFixtureRepos(const fs::path& dir) { return LoadFixtureDirs({dir}); }

Result<std::vector<Repo>> LoadFixtureDirs(const std::vector<fs::path>& dirs) {
  std::vector<fs::path> files;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      return Error::Io("fixtures directory " + dir.string() + " not found");
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return Error::Io("walking " + dir.string() + ": " + ec.message());
      if (it->is_regular_file() && it->path().filename() == "repo.json")
        found.push_back(it->path());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  std::vector<Repo> repos;
  std::map<std::string, fs::path> loaded_from;  // repo id -> its repo.json
  for (const fs::path& file : files) {
    Result<Repo> repo = LoadFixtureRepo(file);
    if (!repo.ok()) return repo.error();
    auto [at, added] = loaded_from.emplace(repo->id, file);
    if (!added) {
      return Error::InvalidInput("repo " + repo->id + " is defined twice: " + at->second.string() +
                                 " and " + file.string());
    }
    repos.push_back(std::move(repo).value());
  }
  return repos;
}

}  // namespace hubwatch::fakehub
