// fakehub's JSON endpoints: model info, commits, tree, refs (the /api/models listing is in
// listing.cc).

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/fakehub/hashing.h"
#include "tests/fakehub/hub_state.h"

namespace hubwatch::fakehub {

// As the Hub does, the server answers 400 to anything else.
const std::set<std::string>& ModelExpandKeys() {
  static const std::set<std::string> keys = {"author",
                                             "baseModels",
                                             "cardData",
                                             "childrenModelCount",
                                             "config",
                                             "createdAt",
                                             "disabled",
                                             "downloads",
                                             "downloadsAllTime",
                                             "evalResults",
                                             "gated",
                                             "gguf",
                                             "inference",
                                             "inferenceProviderMapping",
                                             "lastModified",
                                             "library_name",
                                             "likes",
                                             "mask_token",
                                             "model-index",
                                             "pipeline_tag",
                                             "private",
                                             "resourceGroup",
                                             "safetensors",
                                             "sha",
                                             "siblings",
                                             "spaces",
                                             "tags",
                                             "transformersInfo",
                                             "trendingScore",
                                             "usedStorage",
                                             "widgetData",
                                             "gitalyUid"};
  return keys;
}

namespace {

using nlohmann::ordered_json;

ordered_json GatedJson(const Repo& repo) {
  return repo.gated ? ordered_json(*repo.gated) : ordered_json(false);
}

std::optional<ordered_json> FileJson(const FileMap& files, const std::string& path) {
  auto it = files.find(path);
  if (it == files.end() || it->second->is_lfs()) return std::nullopt;
  ordered_json j = ordered_json::parse(it->second->inline_content, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

// The "config" summary the Hub computes from config.json and tokenizer_config.json.
ordered_json ConfigSummary(const FileMap& files) {
  ordered_json config = ordered_json::object();
  if (auto c = FileJson(files, "config.json")) {
    for (const char* key : {"architectures", "model_type"}) {
      if (c->contains(key)) config[key] = (*c)[key];
    }
  }
  if (auto t = FileJson(files, "tokenizer_config.json")) {
    ordered_json tok = ordered_json::object();
    for (const char* key : {"bos_token", "chat_template", "eos_token", "pad_token", "unk_token"}) {
      if (t->contains(key)) tok[key] = (*t)[key];
    }
    config["tokenizer_config"] = tok;
  }
  return config;
}

int ParseInt(const std::multimap<std::string, std::string>& q, const std::string& key,
             int fallback) {
  auto it = q.find(key);
  if (it == q.end()) return fallback;
  try {
    return std::stoi(it->second);
  } catch (...) {
    return fallback;
  }
}

bool Truthy(const std::multimap<std::string, std::string>& q, const std::string& key) {
  auto it = q.find(key);
  return it != q.end() && (it->second == "true" || it->second == "1" || it->second == "True");
}

}  // namespace

std::string HubState::LinkTo(const std::string& path_and_query) const {
  return "<" + (options_.relative_links ? "" : hub_origin_) + path_and_query + ">; rel=\"next\"";
}

FakeResponse HubState::JsonWithEtag(const FakeRequest& request, std::string body) {
  const std::string etag =
      "W/\"" + std::to_string(body.size()) + "-" + Sha1Hex(body).substr(0, 27) + "\"";
  FakeResponse r;
  r.Set("Content-Type", "application/json; charset=utf-8");
  r.Set("ETag", etag);
  auto strip = [](std::string v) { return v.starts_with("W/") ? v.substr(2) : v; };
  if (auto inm = request.Header("If-None-Match"); inm && strip(*inm) == strip(etag)) {
    r.status = 304;
    return r;
  }
  r.body = std::move(body);
  return r;
}

FakeResponse HubState::ModelInfo(const FakeRequest& request, const Repo& repo, int commit_index,
                                 const Query& query) {
  const Commit& commit = repo.commits[static_cast<size_t>(commit_index)];
  std::set<std::string> expand;
  for (auto [it, end] = query.equal_range("expand"); it != end; ++it) {
    if (!ModelExpandKeys().count(it->second)) {
      return JsonError(
          400, "", "\"expand\" must be one of the model properties, got \"" + it->second + "\"");
    }
    expand.insert(it->second);
  }
  const bool blobs = Truthy(query, "blobs");
  if (!expand.empty() && (blobs || query.count("securityStatus"))) {
    return JsonError(400, "", "\"expand\" cannot be combined with blobs or securityStatus");
  }
  auto want = [&](const char* key) { return expand.empty() || expand.count(key) > 0; };
  ordered_json o;
  o["_id"] = repo.internal_id;
  o["id"] = repo.id;
  if (expand.empty()) o["modelId"] = repo.id;
  if (want("author")) o["author"] = repo.id.substr(0, repo.id.find('/'));
  if (want("sha")) o["sha"] = commit.id;
  if (want("lastModified")) o["lastModified"] = commit.date;
  if (want("private")) o["private"] = repo.is_private;
  if (want("gated")) o["gated"] = GatedJson(repo);
  if (want("disabled")) o["disabled"] = repo.disabled;
  if (want("downloads")) o["downloads"] = repo.downloads;
  if (want("likes")) o["likes"] = repo.likes;
  if (want("tags")) o["tags"] = repo.tags;
  if (want("pipeline_tag") && !repo.pipeline_tag.empty()) o["pipeline_tag"] = repo.pipeline_tag;
  if (want("library_name") && !repo.library_name.empty()) o["library_name"] = repo.library_name;
  if (want("createdAt")) o["createdAt"] = repo.created_at;
  if (want("config")) o["config"] = ConfigSummary(*commit.files);
  std::map<std::string, uint64_t> parameters;
  uint64_t used = 0;
  ordered_json siblings = ordered_json::array();
  for (const auto& [path, blob] : *commit.files) {
    used += blob->size;
    ordered_json s = {{"rfilename", path}};
    if (blobs) {
      s["size"] = blob->size;
      s["blobId"] = blob->blob_oid;
      if (blob->is_lfs()) {
        s["lfs"] = {
            {"size", blob->size}, {"sha256", blob->sha256}, {"pointerSize", blob->pointer_size}};
      }
    }
    siblings.push_back(std::move(s));
    if (blob->kind == BlobKind::kSafetensors && path.find('/') == std::string::npos) {
      for (const auto& [dtype, n] : blob->parameters) parameters[dtype] += n;
    }
  }
  if (want("siblings")) o["siblings"] = std::move(siblings);
  if (want("spaces")) o["spaces"] = ordered_json::array();
  if (want("safetensors") && !parameters.empty()) {
    uint64_t total = 0;
    for (const auto& [dtype, n] : parameters) total += n;
    o["safetensors"] = {{"parameters", parameters}, {"total", total}};
  }
  if (want("usedStorage")) o["usedStorage"] = used;
  return JsonWithEtag(request, o.dump());
}

FakeResponse HubState::Commits(const FakeRequest& request, const Repo& repo,
                               const std::string& rev_raw, int commit_index, const Query& query) {
  std::vector<const Commit*> history;
  for (int i = commit_index; i >= 0; i = repo.commits[static_cast<size_t>(i)].parent) {
    history.push_back(&repo.commits[static_cast<size_t>(i)]);
  }
  const int limit = std::clamp(ParseInt(query, "limit", options_.commits_page_size), 1, 1000);
  const int page = std::max(0, ParseInt(query, "p", 0));
  const bool formatted = query.count("expand") && query.find("expand")->second == "formatted";
  ordered_json list = ordered_json::array();
  const size_t first = static_cast<size_t>(page) * static_cast<size_t>(limit);
  for (size_t i = first; i < history.size() && i < first + static_cast<size_t>(limit); ++i) {
    const Commit& c = *history[i];
    ordered_json authors = ordered_json::array();
    for (const std::string& a : c.authors) {
      authors.push_back(
          {{"user", a},
           {"avatar", "https://cdn-avatars.huggingface.co/v1/production/uploads/" + a + ".png"}});
    }
    ordered_json item = {{"id", c.id},
                         {"title", c.title},
                         {"message", c.message},
                         {"authors", authors},
                         {"date", c.date}};
    if (formatted) item["formatted"] = {{"title", c.title}, {"message", c.message}};
    list.push_back(std::move(item));
  }
  FakeResponse response = JsonWithEtag(request, list.dump());
  response.Set("X-Total-Count", std::to_string(history.size()));
  if (first + static_cast<size_t>(limit) < history.size()) {
    response.Set("Link", LinkTo("/api/models/" + repo.id + "/commits/" + rev_raw + "?p=" +
                                std::to_string(page + 1) + "&limit=" + std::to_string(limit)));
  }
  return response;
}

FakeResponse HubState::Tree(const FakeRequest& request, const Repo& repo,
                            const std::string& rev_raw, int commit_index,
                            const std::string& raw_path, const Query& query) {
  const Commit& commit = repo.commits[static_cast<size_t>(commit_index)];
  const FileMap& files = *commit.files;
  std::string dir = raw_path;
  while (dir.ends_with('/')) dir.pop_back();
  const bool recursive = Truthy(query, "recursive");
  const bool expand = Truthy(query, "expand");
  const std::string prefix = dir.empty() ? "" : dir + "/";
  // Entries under `dir`: files, and directories derived from file paths.
  std::map<std::string, bool> entries;  // path -> is_directory
  bool dir_exists = dir.empty();
  for (const auto& [path, blob] : files) {
    if (!path.starts_with(prefix)) continue;
    dir_exists = true;
    const std::string rest = path.substr(prefix.size());
    size_t slash = rest.find('/');
    if (!recursive) {
      if (slash == std::string::npos)
        entries[path] = false;
      else
        entries[prefix + rest.substr(0, slash)] = true;
      continue;
    }
    entries[path] = false;
    while (slash != std::string::npos) {
      entries[prefix + rest.substr(0, slash)] = true;
      slash = rest.find('/', slash + 1);
    }
  }
  if (!dir_exists) {
    const std::string rev = PercentDecode(rev_raw);
    return JsonError(404, "EntryNotFound", dir + " does not exist on \"" + rev + "\"");
  }
  // Git tree ids, computed bottom-up for the directories we show.
  std::function<std::string(const std::string&)> tree_oid = [&](const std::string& d) {
    std::vector<std::tuple<std::string, bool, std::string>> children;
    std::set<std::string> subdirs;
    const std::string p = d + "/";
    for (const auto& [path, blob] : files) {
      if (!path.starts_with(p)) continue;
      const std::string rest = path.substr(p.size());
      const size_t slash = rest.find('/');
      if (slash == std::string::npos)
        children.emplace_back(rest, false, blob->blob_oid);
      else
        subdirs.insert(rest.substr(0, slash));
    }
    for (const std::string& s : subdirs) children.emplace_back(s, true, tree_oid(p + s));
    return GitTreeOid(std::move(children));
  };
  const int page_size = expand ? options_.tree_expand_page_size : options_.tree_page_size;
  const int offset = std::max(0, ParseInt(query, "cursor", 0));
  ordered_json list = ordered_json::array();
  int index = 0;
  for (const auto& [path, is_dir] : entries) {
    if (index++ < offset) continue;
    if (static_cast<int>(list.size()) >= page_size) break;
    ordered_json e;
    if (is_dir) {
      e = {{"type", "directory"}, {"oid", tree_oid(path)}, {"size", 0}, {"path", path}};
    } else {
      const BlobPtr& blob = files.at(path);
      e = {{"type", "file"}, {"oid", blob->blob_oid}, {"size", blob->size}, {"path", path}};
      if (blob->is_lfs()) {
        e["lfs"] = {
            {"oid", blob->sha256}, {"size", blob->size}, {"pointerSize", blob->pointer_size}};
      }
    }
    if (expand) {
      // Files: the commit that introduced the version shown. Directories: the tip (simplified).
      auto version = [&files_path = path](const Commit& k) -> std::string {
        auto f = k.files->find(files_path);
        return f == k.files->end() ? "" : f->second->blob_oid;
      };
      const Commit* last = &commit;
      while (!is_dir && last->parent >= 0 &&
             version(repo.commits[static_cast<size_t>(last->parent)]) == version(*last)) {
        last = &repo.commits[static_cast<size_t>(last->parent)];
      }
      e["lastCommit"] = {{"id", last->id}, {"title", last->title}, {"date", last->date}};
    }
    list.push_back(std::move(e));
  }
  FakeResponse response = JsonWithEtag(request, list.dump());
  if (offset + page_size < static_cast<int>(entries.size())) {
    std::string next = "/api/models/" + repo.id + "/tree/" + rev_raw +
                       (dir.empty() ? "" : "/" + PercentEncode(dir, true)) +
                       "?recursive=" + (recursive ? "true" : "false") +
                       "&expand=" + (expand ? "true" : "false") +
                       "&cursor=" + std::to_string(offset + page_size);
    response.Set("Link", LinkTo(next));
  }
  return response;
}

FakeResponse HubState::Refs(const FakeRequest& request, const Repo& repo, const Query& query) {
  auto ref = [&](const std::string& name, const std::string& full, int commit) {
    return ordered_json{{"name", name},
                        {"ref", full},
                        {"targetCommit", repo.commits[static_cast<size_t>(commit)].id}};
  };
  ordered_json branches = ordered_json::array({ref("main", "refs/heads/main", MainHead(repo))});
  for (const auto& [name, commit] : repo.branches) {
    if (Visible(repo, commit)) branches.push_back(ref(name, "refs/heads/" + name, commit));
  }
  ordered_json tags = ordered_json::array();
  for (const auto& [name, commit] : repo.tag_refs) {
    if (Visible(repo, commit)) tags.push_back(ref(name, "refs/tags/" + name, commit));
  }
  ordered_json o = {{"branches", branches}, {"converts", ordered_json::array()}, {"tags", tags}};
  if (Truthy(query, "include_prs")) o["pullRequests"] = ordered_json::array();
  return JsonWithEtag(request, o.dump());
}

}  // namespace hubwatch::fakehub
