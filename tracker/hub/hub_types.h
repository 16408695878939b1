#pragma once

// What the Hub's endpoints return, as plain values (fields as the Hub names them).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "estimator/formats/safetensors_header.h"

namespace hubwatch::hub {

// GET /api/models/{id}/refs
struct GitRef {
  std::string name;           // "main"
  std::string ref;            // "refs/heads/main"
  std::string target_commit;  // 40 hex
};
struct RepoRefs {
  std::vector<GitRef> branches;
  std::vector<GitRef> tags;
  std::vector<GitRef> converts;
  std::vector<GitRef> pull_requests;  // only when asked for
  // The repo id that answered, from the final URL: another id than the one asked for when the
  // Hub redirected a renamed repo (307 to /api/models/{new id}/refs).
  std::string repo_id;
};

// GET /api/models/{id}/commits/{rev}, newest first.
struct CommitInfo {
  std::string id;
  std::string title;
  std::string message;
  std::vector<std::string> authors;  // HF user names
  std::string date;                  // ISO-8601 as sent
};
struct CommitList {
  std::vector<CommitInfo> commits;
  std::optional<uint64_t> total_count;  // X-Total-Count of the first page
  int pages = 0;
  bool reached_stop_commit = false;  // CommitsOptions::stop_at was seen (and not included)
};

// GET /api/models/{id}/tree/{rev}[/{path}]
struct LfsInfo {
  std::string oid;  // sha256 hex (tree) / sha256 (siblings)
  uint64_t size = 0;
  uint64_t pointer_size = 0;
};
struct LastCommit {
  std::string id;
  std::string title;
  std::string date;
};
struct TreeEntry {
  std::string type;  // "file", "directory" (anything else is kept as sent)
  std::string oid;   // git blob or tree sha1
  uint64_t size = 0;
  std::string path;
  std::optional<LfsInfo> lfs;
  std::optional<std::string> xet_hash;
  std::optional<LastCommit> last_commit;  // with expand
};

// GET /api/models/{id}[/revision/{rev}]
enum class GatedMode { kNotGated, kAuto, kManual };
struct Sibling {
  std::string rfilename;
  std::optional<uint64_t> size;  // with blobs=true
  std::optional<std::string> blob_id;
  std::optional<LfsInfo> lfs;  // oid holds lfs.sha256
};
struct ModelInfo {
  std::string internal_id;  // "_id"
  std::string id;
  std::optional<std::string> author;
  std::optional<std::string> sha;
  std::optional<std::string> last_modified;
  std::optional<std::string> created_at;
  std::optional<bool> is_private;
  std::optional<GatedMode> gated;
  std::optional<bool> disabled;
  std::optional<std::string> pipeline_tag;
  std::optional<std::string> library_name;
  std::vector<std::string> tags;
  std::optional<uint64_t> downloads;  // over the last 30 days (expand=downloads, or by default)
  std::optional<uint64_t> likes;
  std::vector<Sibling> siblings;
  std::map<std::string, uint64_t> safetensors_parameters;  // dtype -> count
  std::optional<uint64_t> safetensors_total;
  bool tags_cut = false;      // more than hub_json.h's kMaxModelTags came; the first are kept
  bool siblings_cut = false;  // more than kMaxModelSiblings came; the first are kept
};

// GET /api/models?author=...
struct ModelSummary {
  std::string id;
  std::optional<std::string> sha;
  std::optional<std::string> last_modified;
  std::optional<GatedMode> gated;
  bool is_private = false;
  std::vector<std::string> tags;          // with expand=tags
  std::vector<Sibling> siblings;          // with expand=siblings (file names only, in the listing)
  std::optional<std::string> created_at;  // with expand=createdAt
  std::optional<uint64_t> downloads;      // with expand=downloads (the last 30 days)
  std::optional<uint64_t> likes;          // with expand=likes
  std::optional<std::string> pipeline_tag;  // with expand=pipeline_tag
  std::optional<std::string> library_name;  // with expand=library_name
  bool tags_cut = false;      // more than hub_json.h's kMaxModelTags came; the first are kept
  bool siblings_cut = false;  // more than kMaxModelSiblings came; the first are kept
};

// HEAD /{id}/resolve/{rev}/{path}: identity read from the Hub hop, never from the CDN.
struct ResolvedFile {
  std::string commit;            // X-Repo-Commit
  std::string etag;              // X-Linked-Etag (else ETag), W/ and quotes removed
  std::optional<uint64_t> size;  // X-Linked-Size (else Content-Length of a non-redirect)
  std::string location;  // where the content lives, when the Hub redirected off-host ("" else)
  bool is_lfs = false;   // the Hub redirected to another host (LFS/Xet storage)
  int final_status = 0;  // status of the last response read
};

// GET /{id}/resolve/{rev}/{path}
struct FileContent {
  ResolvedFile file;
  std::string body;
  bool from_cache = false;  // a 304 answered from the ETag cache
};

// The header of one .safetensors file, read with Range requests.
struct SafetensorsHeaderInfo {
  SafetensorsHeader header;
  uint64_t header_length = 0;  // the 8-byte prefix's N
  uint64_t file_size = 0;      // from Content-Range
  ResolvedFile file;
  int range_reads = 0;  // 1, or 2 when the header was longer than the first read
};

}  // namespace hubwatch::hub
