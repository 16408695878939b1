#include "tracker/hub/hub_json.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "estimator/base/json_nesting.h"
#include "tracker/hub/json_shape.h"

namespace hubwatch::hub {
namespace {

using nlohmann::json;
using Kind = JsonShape::Kind;

// What each parser keeps of its body: the keys read below, each list to its cap (hub_json.h).
constexpr JsonShape List(const JsonShape& element, size_t cap) {
  return {.kind = Kind::kList, .element = &element, .cap = cap};
}
constexpr JsonShape Object(std::span<const JsonMember> members) {
  return {.kind = Kind::kObject, .members = members};
}
constexpr const JsonShape* kS = &kJsonScalar;

constexpr JsonMember kRefFields[] = {{"name", kS}, {"ref", kS}, {"targetCommit", kS}};
constexpr JsonShape kRef = Object(kRefFields);
constexpr JsonShape kRefList = List(kRef, kMaxRefsPerList);
constexpr JsonMember kRefsFields[] = {{"branches", &kRefList},
                                      {"tags", &kRefList},
                                      {"converts", &kRefList},
                                      {"pullRequests", &kRefList}};
constexpr JsonShape kRefsBody = Object(kRefsFields);

constexpr JsonMember kAuthorFields[] = {{"user", kS}};
constexpr JsonShape kAuthor = Object(kAuthorFields);
constexpr JsonShape kAuthors = List(kAuthor, kMaxCommitAuthors);
constexpr JsonMember kCommitFields[] = {
    {"id", kS}, {"title", kS}, {"message", kS}, {"date", kS}, {"authors", &kAuthors}};
constexpr JsonShape kCommit = Object(kCommitFields);
constexpr JsonShape kCommitsBody = List(kCommit, kMaxPageEntries);

// "lfs" of a tree entry (oid) and of a sibling (sha256).
constexpr JsonMember kLfsFields[] = {
    {"oid", kS}, {"sha256", kS}, {"size", kS}, {"pointerSize", kS}};
constexpr JsonShape kLfs = Object(kLfsFields);
constexpr JsonMember kLastCommitFields[] = {{"id", kS}, {"title", kS}, {"date", kS}};
constexpr JsonShape kLastCommit = Object(kLastCommitFields);
constexpr JsonMember kTreeEntryFields[] = {{"type", kS},
                                           {"oid", kS},
                                           {"size", kS},
                                           {"path", kS},
                                           {"lfs", &kLfs},
                                           {"xetHash", kS},
                                           {"lastCommit", &kLastCommit}};
constexpr JsonShape kTreeEntry = Object(kTreeEntryFields);
constexpr JsonShape kTreeBody = List(kTreeEntry, kMaxPageEntries);

constexpr JsonShape kTags = List(kJsonScalar, kMaxModelTags);
constexpr JsonMember kSiblingFields[] = {
    {"rfilename", kS}, {"size", kS}, {"blobId", kS}, {"lfs", &kLfs}};
constexpr JsonShape kSibling = Object(kSiblingFields);
constexpr JsonShape kSiblings = List(kSibling, kMaxModelSiblings);
constexpr JsonShape kDtypes = {
    .kind = Kind::kMap, .element = &kJsonScalar, .cap = kMaxSafetensorsDtypes};
constexpr JsonMember kSafetensorsFields[] = {{"parameters", &kDtypes}, {"total", kS}};
constexpr JsonShape kSafetensors = Object(kSafetensorsFields);
constexpr JsonMember kModelInfoFields[] = {{"_id", kS},
                                           {"id", kS},
                                           {"author", kS},
                                           {"sha", kS},
                                           {"lastModified", kS},
                                           {"createdAt", kS},
                                           {"private", kS},
                                           {"gated", kS},
                                           {"disabled", kS},
                                           {"pipeline_tag", kS},
                                           {"library_name", kS},
                                           {"tags", &kTags},
                                           {"downloads", kS},
                                           {"likes", kS},
                                           {"siblings", &kSiblings},
                                           {"safetensors", &kSafetensors}};
constexpr JsonShape kModelInfoBody = Object(kModelInfoFields);

constexpr JsonMember kListedModelFields[] = {
    {"id", kS},        {"sha", kS},      {"lastModified", kS},     {"gated", kS},
    {"private", kS},   {"tags", &kTags}, {"siblings", &kSiblings}, {"createdAt", kS},
    {"downloads", kS}, {"likes", kS},    {"pipeline_tag", kS},     {"library_name", kS}};
constexpr JsonShape kListedModel = Object(kListedModelFields);
constexpr JsonShape kModelListBody = List(kListedModel, kMaxPageEntries);

// Field access that reports what is wrong instead of throwing.
class Reader {
 public:
  Reader(const std::string& url, std::string what) : url_(url), what_(std::move(what)) {}

  // The body parsed as `shape` keeps it; nullptr (and failed()) when it is not valid JSON.
  const json* Parse(std::string_view body, const JsonShape& shape) {
    if (JsonNestsDeeperThan(body)) {
      Fail("body nests JSON deeper than " + std::to_string(kMaxJsonNesting) + " levels");
      return nullptr;
    }
    doc_ = ParseShaped(body, shape);
    if (doc_.root.is_discarded()) {
      Fail("body is not valid JSON (" + std::to_string(body.size()) + " bytes)");
      return nullptr;
    }
    return &doc_.root;
  }

  // False (and failed()) when `list` listed more than `cap` entries: only the first were kept.
  bool WithinCap(const json& list, size_t cap, const std::string& what) {
    if (doc_.Listed(list) <= list.size()) return true;
    Fail(what + " lists more than " + std::to_string(cap) + " entries");
    return false;
  }
  // True when a cap cut `list` (an array or object of the parsed body).
  bool Cut(const json& list) const { return doc_.Listed(list) > list.size(); }

  std::string String(const json& obj, const char* key, bool required = true) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
      if (required) Fail(std::string("missing \"") + key + "\"");
      return "";
    }
    if (!it->is_string()) {
      Fail(std::string("\"") + key + "\" is not a string");
      return "";
    }
    return it->get<std::string>();
  }

  std::optional<std::string> OptString(const json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) {
      Fail(std::string("\"") + key + "\" is not a string");
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  std::optional<uint64_t> OptUnsigned(const json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
      Fail(std::string("\"") + key + "\" is not a non-negative integer");
      return std::nullopt;
    }
    return it->get<uint64_t>();
  }

  std::optional<bool> OptBool(const json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) {
      Fail(std::string("\"") + key + "\" is not a boolean");
      return std::nullopt;
    }
    return it->get<bool>();
  }

  std::optional<GatedMode> OptGated(const json& obj) {
    auto it = obj.find("gated");
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (it->is_boolean() && !it->get<bool>()) return GatedMode::kNotGated;
    if (it->is_string() && *it == "auto") return GatedMode::kAuto;
    if (it->is_string() && *it == "manual") return GatedMode::kManual;
    if (it->is_boolean()) return GatedMode::kAuto;  // true: gated, mode unknown
    Fail("\"gated\" is neither false, \"auto\" nor \"manual\"");
    return std::nullopt;
  }

  std::optional<LfsInfo> OptLfs(const json& obj, const char* oid_key) {
    auto it = obj.find("lfs");
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_object()) {
      Fail("\"lfs\" is not an object");
      return std::nullopt;
    }
    LfsInfo lfs;
    lfs.oid = String(*it, oid_key);
    lfs.size = OptUnsigned(*it, "size").value_or(0);
    lfs.pointer_size = OptUnsigned(*it, "pointerSize").value_or(0);
    return lfs;
  }

  // "tags": the strings of the array (others skipped), and whether its cap cut it; absent:
  // none.
  std::vector<std::string> Tags(const json& obj, bool* cut) {
    std::vector<std::string> tags;
    if (auto it = obj.find("tags"); it != obj.end() && RequireArray(*it, "\"tags\"")) {
      *cut = Cut(*it);
      for (const json& t : *it) {
        if (t.is_string()) tags.push_back(t.get<std::string>());
      }
    }
    return tags;
  }
  // "siblings": [{"rfilename", "size"?, "blobId"?, "lfs"?}], and whether its cap cut it;
  // absent: none.
  std::vector<Sibling> Siblings(const json& obj, bool* cut) {
    std::vector<Sibling> siblings;
    if (auto it = obj.find("siblings"); it != obj.end() && RequireArray(*it, "\"siblings\"")) {
      *cut = Cut(*it);
      for (const json& s : *it) {
        if (!RequireObject(s, "a sibling")) break;
        Sibling sibling;
        sibling.rfilename = String(s, "rfilename");
        sibling.size = OptUnsigned(s, "size");
        sibling.blob_id = OptString(s, "blobId");
        sibling.lfs = OptLfs(s, "sha256");
        siblings.push_back(std::move(sibling));
      }
    }
    return siblings;
  }
  bool RequireArray(const json& v, const std::string& what) {
    if (!v.is_array()) Fail(what + " is not an array");
    return v.is_array();
  }
  bool RequireObject(const json& v, const std::string& what) {
    if (!v.is_object()) Fail(what + " is not an object");
    return v.is_object();
  }

  void Fail(std::string why) {
    if (!error_) error_ = ProtocolError(what_ + ": " + std::move(why), url_, 200);
  }
  bool failed() const { return error_.has_value(); }
  const HubError& error() const { return *error_; }

 private:
  const std::string& url_;
  std::string what_;
  ShapedJson doc_;
  std::optional<HubError> error_;
};

std::vector<GitRef> ParseRefList(Reader& r, const json& root, const char* key) {
  std::vector<GitRef> refs;
  auto it = root.find(key);
  if (it == root.end() || it->is_null()) return refs;
  const std::string what = std::string("\"") + key + "\"";
  if (!r.RequireArray(*it, what) || !r.WithinCap(*it, kMaxRefsPerList, what)) return refs;
  for (const json& item : *it) {
    if (!r.RequireObject(item, std::string("an entry of \"") + key + "\"")) break;
    refs.push_back({r.String(item, "name"), r.String(item, "ref"), r.String(item, "targetCommit")});
  }
  return refs;
}

}  // namespace

HubResult<RepoRefs> ParseRefsJson(std::string_view body, const std::string& url) {
  Reader r(url, "refs");
  const json* root = r.Parse(body, kRefsBody);
  if (!root) return r.error();
  if (!r.RequireObject(*root, "body")) return r.error();
  RepoRefs refs;
  refs.branches = ParseRefList(r, *root, "branches");
  refs.tags = ParseRefList(r, *root, "tags");
  refs.converts = ParseRefList(r, *root, "converts");
  refs.pull_requests = ParseRefList(r, *root, "pullRequests");
  if (r.failed()) return r.error();
  return refs;
}

HubResult<std::vector<CommitInfo>> ParseCommitsJson(std::string_view body, const std::string& url) {
  Reader r(url, "commits");
  const json* root = r.Parse(body, kCommitsBody);
  if (!root) return r.error();
  if (!r.RequireArray(*root, "body") || !r.WithinCap(*root, kMaxPageEntries, "the page")) {
    return r.error();
  }
  std::vector<CommitInfo> commits;
  for (const json& item : *root) {
    if (!r.RequireObject(item, "a commit")) break;
    CommitInfo c;
    c.id = r.String(item, "id");
    c.title = r.String(item, "title");
    c.message = r.String(item, "message", /*required=*/false);
    c.date = r.String(item, "date");
    if (auto it = item.find("authors"); it != item.end() && r.RequireArray(*it, "\"authors\"")) {
      for (const json& a : *it) {
        if (!r.RequireObject(a, "an author")) break;
        c.authors.push_back(r.String(a, "user"));
      }
    }
    if (r.failed()) break;
    commits.push_back(std::move(c));
  }
  if (r.failed()) return r.error();
  return commits;
}

HubResult<std::vector<TreeEntry>> ParseTreeJson(std::string_view body, const std::string& url) {
  Reader r(url, "tree");
  const json* root = r.Parse(body, kTreeBody);
  if (!root) return r.error();
  if (!r.RequireArray(*root, "body") || !r.WithinCap(*root, kMaxPageEntries, "the page")) {
    return r.error();
  }
  std::vector<TreeEntry> entries;
  for (const json& item : *root) {
    if (!r.RequireObject(item, "a tree entry")) break;
    TreeEntry e;
    e.type = r.String(item, "type");
    e.oid = r.String(item, "oid", /*required=*/false);
    e.size = r.OptUnsigned(item, "size").value_or(0);
    e.path = r.String(item, "path");
    e.lfs = r.OptLfs(item, "oid");
    e.xet_hash = r.OptString(item, "xetHash");
    if (auto it = item.find("lastCommit"); it != item.end() && it->is_object()) {
      e.last_commit =
          LastCommit{r.String(*it, "id"), r.String(*it, "title"), r.String(*it, "date")};
    }
    if (r.failed()) break;
    entries.push_back(std::move(e));
  }
  if (r.failed()) return r.error();
  return entries;
}

HubResult<ModelInfo> ParseModelInfoJson(std::string_view body, const std::string& url) {
  Reader r(url, "model info");
  const json* root = r.Parse(body, kModelInfoBody);
  if (!root) return r.error();
  if (!r.RequireObject(*root, "body")) return r.error();
  const json& o = *root;
  ModelInfo info;
  info.internal_id = r.String(o, "_id", /*required=*/false);
  info.id = r.String(o, "id");
  info.author = r.OptString(o, "author");
  info.sha = r.OptString(o, "sha");
  info.last_modified = r.OptString(o, "lastModified");
  info.created_at = r.OptString(o, "createdAt");
  info.is_private = r.OptBool(o, "private");
  info.gated = r.OptGated(o);
  info.disabled = r.OptBool(o, "disabled");
  info.pipeline_tag = r.OptString(o, "pipeline_tag");
  info.library_name = r.OptString(o, "library_name");
  info.tags = r.Tags(o, &info.tags_cut);
  info.downloads = r.OptUnsigned(o, "downloads");
  info.likes = r.OptUnsigned(o, "likes");
  info.siblings = r.Siblings(o, &info.siblings_cut);
  if (auto it = o.find("safetensors"); it != o.end() && r.RequireObject(*it, "\"safetensors\"")) {
    if (auto p = it->find("parameters"); p != it->end() && r.RequireObject(*p, "parameters")) {
      for (auto d = p->begin(); d != p->end(); ++d) {
        if (!d->is_number_unsigned()) {
          r.Fail("safetensors.parameters." + d.key() + " is not a count");
          break;
        }
        info.safetensors_parameters[d.key()] = d->get<uint64_t>();
      }
    }
    info.safetensors_total = r.OptUnsigned(*it, "total");
  }
  if (r.failed()) return r.error();
  return info;
}

HubResult<std::vector<ModelSummary>> ParseModelListJson(std::string_view body,
                                                        const std::string& url) {
  Reader r(url, "model list");
  const json* root = r.Parse(body, kModelListBody);
  if (!root) return r.error();
  if (!r.RequireArray(*root, "body") || !r.WithinCap(*root, kMaxPageEntries, "the page")) {
    return r.error();
  }
  std::vector<ModelSummary> models;
  for (const json& item : *root) {
    if (!r.RequireObject(item, "a model")) break;
    ModelSummary m;
    m.id = r.String(item, "id");
    m.sha = r.OptString(item, "sha");
    m.last_modified = r.OptString(item, "lastModified");
    m.gated = r.OptGated(item);
    m.is_private = r.OptBool(item, "private").value_or(false);
    m.tags = r.Tags(item, &m.tags_cut);
    m.siblings = r.Siblings(item, &m.siblings_cut);
    m.created_at = r.OptString(item, "createdAt");
    m.downloads = r.OptUnsigned(item, "downloads");
    m.likes = r.OptUnsigned(item, "likes");
    m.pipeline_tag = r.OptString(item, "pipeline_tag");
    m.library_name = r.OptString(item, "library_name");
    if (r.failed()) break;
    models.push_back(std::move(m));
  }
  if (r.failed()) return r.error();
  return models;
}

}  // namespace hubwatch::hub
