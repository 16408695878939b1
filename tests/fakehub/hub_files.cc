// fakehub's file endpoints: resolve (307 to resolve-cache for git files, 302 to the CDN for LFS),
// resolve-cache, raw, and the CDN listener; Range/206/416, ETag/304.

#include <charconv>
#include <chrono>

#include "tests/fakehub/hashing.h"
#include "tests/fakehub/hub_state.h"

namespace hubwatch::fakehub {
namespace {

constexpr char kSigningSecret[] = "fakehub-signing-secret";

std::string Signature(const std::string& path, const std::string& expires) {
  return Sha256Hex(kSigningSecret + path + "|" + expires).substr(0, 40);
}

std::optional<uint64_t> ToU64(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string ContentTypeFor(const std::string& path) {
  if (path.ends_with(".json")) return "application/json";
  if (path.ends_with(".md") || path.ends_with(".txt") || path.ends_with(".gitattributes")) {
    return "text/plain; charset=utf-8";
  }
  return "application/octet-stream";
}

std::string FileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string QueryValue(const std::string& query, const std::string& key) {
  std::string_view q = query;
  while (!q.empty()) {
    const size_t amp = q.find('&');
    std::string_view item = q.substr(0, amp);
    if (item.starts_with(key + "=")) return PercentDecode(item.substr(key.size() + 1));
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return "";
}

FakeResponse EntryNotFound(const std::string& commit) {
  FakeResponse r;
  r.status = 404;
  r.body = "Entry not found";
  r.Set("Content-Type", "text/plain; charset=utf-8");
  r.Set("X-Error-Code", "EntryNotFound");
  r.Set("X-Error-Message", "Entry not found");
  r.Set("X-Repo-Commit", commit);
  return r;
}

bool EtagMatches(const FakeRequest& request, const std::string& etag) {
  auto inm = request.Header("If-None-Match");
  if (!inm) return false;
  auto bare = [](std::string v) {
    if (v.starts_with("W/")) v = v.substr(2);
    if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
    return v;
  };
  return bare(*inm) == bare(etag) || *inm == "*";
}

}  // namespace

FakeResponse HubState::Content(const FakeRequest& request, const BlobPtr& stored, std::string etag,
                               bool serve_pointer) {
  const BlobPtr blob = serve_pointer ? MakeInlineBlob(stored->lfs_pointer) : stored;
  FakeResponse r;
  r.Set("ETag", etag);
  r.Set("Accept-Ranges", "bytes");
  if (EtagMatches(request, etag)) {
    r.status = 304;
    return r;
  }
  const bool ignore_range =
      active_modifier_ != nullptr && active_modifier_->action == FaultAction::kIgnoreRange;
  r.blob = blob;
  r.begin = 0;
  r.end = blob->size;
  r.huge_header_claim = active_modifier_ != nullptr &&
                        active_modifier_->action == FaultAction::kHugeSafetensorsHeader;
  auto range = request.Header("Range");
  if (range && !ignore_range && range->starts_with("bytes=") &&
      range->find(',') == std::string::npos) {
    const std::string spec = range->substr(6);
    const size_t dash = spec.find('-');
    std::optional<uint64_t> first, last;
    if (dash != std::string::npos) {
      first = ToU64(std::string_view(spec).substr(0, dash));
      last = ToU64(std::string_view(spec).substr(dash + 1));
    }
    bool valid = dash != std::string::npos && (first || last);
    uint64_t b = 0, e = 0;
    if (valid && !first) {  // bytes=-N: the last N bytes
      b = blob->size - std::min(*last, blob->size);
      e = blob->size;
      valid = *last > 0;
    } else if (valid) {
      b = *first;
      e = last ? std::min(*last + 1, blob->size) : blob->size;
      valid = !last || *last >= *first;
    }
    if (valid && (b >= blob->size || b >= e)) {
      FakeResponse unsatisfiable;
      unsatisfiable.status = 416;
      unsatisfiable.Set("Content-Range", "bytes */" + std::to_string(blob->size));
      unsatisfiable.Set("Content-Type", "text/plain; charset=utf-8");
      unsatisfiable.body = "Requested Range Not Satisfiable";
      return unsatisfiable;
    }
    if (valid) {
      r.status = 206;
      r.begin = b;
      r.end = e;
      r.Set("Content-Range", "bytes " + std::to_string(b) + "-" + std::to_string(e - 1) + "/" +
                                 std::to_string(blob->size));
    }
  }
  return r;
}

FakeResponse HubState::Resolve(const FakeRequest& request, const Repo& repo,
                               const std::string& rev_raw, int commit_index,
                               const std::string& path) {
  const Commit& commit = repo.commits[static_cast<size_t>(commit_index)];
  auto it = commit.files->find(path);
  if (it == commit.files->end()) return EntryNotFound(commit.id);
  const BlobPtr& blob = it->second;
  const std::string identity = "\"" + (blob->is_lfs() ? blob->sha256 : blob->blob_oid) + "\"";
  FakeResponse r;
  r.Set("X-Repo-Commit", commit.id);
  r.Set("X-Linked-Etag", identity);
  r.Set("X-Linked-Size", std::to_string(blob->size));
  r.Set("ETag", identity);
  if (EtagMatches(request, identity)) {
    r.status = 304;
    return r;
  }
  std::string location;
  if (blob->is_lfs()) {
    const std::string cdn_path = "/repos/" + repo.internal_id + "/" + blob->sha256;
    const std::string expires =
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count() +
                       3600);
    location = cdn_origin_ + cdn_path + "?Expires=" + expires +
               "&Policy=eyJTdGF0ZW1lbnQiOlt7fV19&Signature=" + Signature(cdn_path, expires) +
               "&Key-Pair-Id=KFAKEHUB0000&response-content-disposition=" +
               PercentEncode("inline; filename*=UTF-8''" + FileName(path) + ";", false);
    r.status = 302;
    r.body = "Found. Redirecting to " + location;
  } else {
    location =
        "/api/resolve-cache/models/" + repo.id + "/" + commit.id + "/" + PercentEncode(path, true) +
        "?" +
        PercentEncode("/" + repo.id + "/resolve/" + PercentDecode(rev_raw) + "/" + path, false) +
        "=&etag=" + PercentEncode(identity, false);
    r.status = 307;
    r.body = "Temporary Redirect. Redirecting to " + location;
  }
  r.Set("Location", location);
  r.Set("Content-Type", "text/plain; charset=utf-8");
  return r;
}

FakeResponse HubState::ResolveCache(const FakeRequest& request, const Repo& repo, int commit_index,
                                    const std::string& path) {
  const Commit& commit = repo.commits[static_cast<size_t>(commit_index)];
  auto it = commit.files->find(path);
  if (it == commit.files->end()) return EntryNotFound(commit.id);
  FakeResponse r = Content(request, it->second, "\"" + it->second->blob_oid + "\"", false);
  r.Set("X-Repo-Commit", commit.id);
  r.Set("Content-Type", ContentTypeFor(path));
  r.Set("Content-Disposition",
        "inline; filename*=UTF-8''" + FileName(path) + "; filename=\"" + FileName(path) + "\";");
  return r;
}

FakeResponse HubState::Raw(const FakeRequest& request, const Repo& repo, int commit_index,
                           const std::string& path) {
  const Commit& commit = repo.commits[static_cast<size_t>(commit_index)];
  auto it = commit.files->find(path);
  if (it == commit.files->end()) return EntryNotFound(commit.id);
  FakeResponse r =
      Content(request, it->second, "\"" + it->second->blob_oid + "\"", it->second->is_lfs());
  r.Set("X-Repo-Commit", commit.id);
  r.Set("Content-Type", it->second->is_lfs() ? "text/plain; charset=utf-8" : ContentTypeFor(path));
  return r;
}

FakeResponse HubState::Cdn(const FakeRequest& request) {
  auto denied = [](const std::string& why) {
    FakeResponse r;
    r.status = 403;
    r.Set("Content-Type", "application/xml");
    r.body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AccessDenied</Code><Message>" +
             why + "</Message></Error>";
    return r;
  };
  const std::vector<std::string> seg = SplitPath(request.path);
  if (seg.size() != 3 || seg[0] != "repos") return denied("no such object");
  const std::string expires = QueryValue(request.query, "Expires");
  if (QueryValue(request.query, "Signature") != Signature(request.path, expires)) {
    return denied("signature does not match");
  }
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  if (auto e = ToU64(expires); !e || static_cast<int64_t>(*e) < now) return denied("expired");
  auto it = blobs_by_sha256_.find(seg[2]);
  if (it == blobs_by_sha256_.end()) return denied("no such object");
  FakeResponse r = Content(request, it->second, "\"" + it->second->cdn_etag + "\"", false);
  r.Set("Content-Type", "application/octet-stream");
  r.Set("Cache-Control", "public, max-age=604800, immutable");
  r.Set("X-Cache", "Hit from fakehub-cdn");
  return r;
}

}  // namespace hubwatch::fakehub
