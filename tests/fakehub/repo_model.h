#pragma once

// fakehub's model of a Hub repository: commits with full file snapshots, refs, and the blobs
// those files point at. Small files hold their bytes; LFS files (safetensors included) are
// virtual: a declared size and sha256, content synthesized on demand from a seed, so an 18 GB
// checkpoint costs a few kilobytes. A safetensors blob's first bytes are its real header; a GGUF
// blob's (gguf_blob.h) are its real header, metadata and tensor infos.
//
// Values are immutable once built and shared by pointer; safe to read from many threads.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::fakehub {

enum class BlobKind { kInline, kLfs, kSafetensors, kGguf };

// A synthesized prefix built on first use (a GGUF file's megabytes of vocabulary and merges):
// its length is known when the blob is made, its bytes only once a read reaches them.
struct LazyPrefix {
  uint64_t size = 0;
  std::function<std::string()> build;  // returns exactly `size` bytes
  const std::string& Get() const;      // builds once; thread-safe

 private:
  mutable std::once_flag once_;
  mutable std::string bytes_;
};

struct FileBlob {
  BlobKind kind = BlobKind::kInline;
  std::string inline_content;      // kInline: the bytes
  std::string safetensors_prefix;  // kSafetensors: 8-byte length + header JSON (+ padding)
  uint64_t size = 0;               // bytes of the whole file
  std::string sha256;              // content sha256 (declared for virtual blobs)
  uint64_t seed = 0;               // virtual content generator
  std::string blob_oid;            // git blob sha1 of the content, or of the LFS pointer file
  uint64_t pointer_size = 0;       // LFS pointer file length (0 for inline)
  std::string lfs_pointer;         // the pointer file text (LFS only)
  std::string cdn_etag;            // the storage's ETag, unlike sha256 (like a Xet hash)
  std::map<std::string, uint64_t> parameters;  // safetensors: dtype -> elements
  // kGguf: the synthesized first bytes (header, key-value pairs, tensor infos, padding to the
  // alignment) in place of safetensors_prefix, built by the first read that reaches them.
  std::shared_ptr<const LazyPrefix> lazy_prefix;

  bool is_lfs() const { return kind != BlobKind::kInline; }
  uint64_t prefix_size() const {
    return lazy_prefix ? lazy_prefix->size : safetensors_prefix.size();
  }
  // Writes bytes [offset, offset + n) of the file to out. REQUIRES: offset + n <= size.
  void Read(uint64_t offset, size_t n, char* out) const;
};
using BlobPtr = std::shared_ptr<const FileBlob>;
using FileMap = std::map<std::string, BlobPtr>;  // path in repo -> blob

BlobPtr MakeInlineBlob(std::string content);
BlobPtr MakeLfsBlob(uint64_t size, std::string sha256, uint64_t seed);
// An LFS blob of `kind` whose first bytes are `prefix` (a synthesized file header, built when
// first read) and whose other size - prefix->size bytes are virtual from `seed`. Errors on a
// sha256 that is not 64 lower-case hex digits or a size shorter than the prefix.
Result<BlobPtr> MakePrefixedLfsBlob(BlobKind kind, std::shared_ptr<const LazyPrefix> prefix,
                                    uint64_t size, std::string sha256, uint64_t seed);

struct SafetensorsTensorSpec {
  std::string name;
  std::string dtype;  // "" = the manifest's dtype
  std::vector<uint64_t> shape;
};
struct SafetensorsManifest {
  std::string dtype = "BF16";
  std::vector<SafetensorsTensorSpec> tensors;   // data laid out in this order
  std::map<std::string, std::string> metadata;  // __metadata__
  uint64_t seed = 0;
  std::string sha256;                     // declared
  std::optional<uint64_t> declared_size;  // checked against the synthesized size
};
// Synthesizes the header exactly (offsets contiguous in manifest order, padded with spaces to a
// multiple of 8, as the Rust writer does). Errors on unknown dtypes, a size mismatch, bad sha256.
Result<BlobPtr> MakeSafetensorsBlob(const SafetensorsManifest& manifest);

struct Commit {
  std::string id;
  std::string title;
  std::string message;
  std::vector<std::string> authors;
  std::string date;                      // ISO-8601 with milliseconds and Z
  int64_t time = 0;                      // the same, in Unix seconds
  int parent = -1;                       // index in Repo::commits; -1 for a root
  std::shared_ptr<const FileMap> files;  // the full tree at this commit
};

struct Repo {
  std::string id;           // "namespace/name" (current name)
  std::string internal_id;  // "_id", 24 hex
  std::string created_at;
  std::optional<std::string> gated;  // "auto" or "manual"; nullopt = not gated
  bool disabled = false;
  bool is_private = false;
  bool deleted = false;
  std::string pipeline_tag;
  std::string library_name;
  std::vector<std::string> tags;
  uint64_t downloads = 0;
  uint64_t likes = 0;
  std::vector<std::string> renamed_from;  // old ids that answer 307
  std::vector<Commit> commits;            // every commit object
  std::vector<int> main_history;          // main's commits, oldest first (replay order)
  int main_override = -1;                 // set by a super-squash: main's head from then on
  std::map<std::string, int> branches;    // other branches -> commit index
  std::map<std::string, int> tag_refs;    // tags -> commit index
};

// Parses "2024-04-18T10:11:12.000Z" (milliseconds optional).
std::optional<int64_t> ParseIsoTime(const std::string& text);
std::string FormatIsoTime(int64_t unix_seconds);

// Builds a Repo commit by commit, checking each operation: "add" of a path that exists, or
// "change"/"delete" of one that does not, is an error.
class RepoBuilder {
 public:
  explicit RepoBuilder(Repo meta) : repo_(std::move(meta)) {}

  struct CommitSpec {
    std::string id;  // "" = derived from repo, parent, title, date
    std::string title;
    std::string message;
    std::vector<std::string> authors;
    std::string date;
    std::map<std::string, BlobPtr> add;
    std::map<std::string, BlobPtr> change;
    std::vector<std::string> remove;
  };
  Status AddCommit(CommitSpec spec);
  // Points a tag or branch at a commit already added, by id.
  Status AddRef(bool is_tag, const std::string& name, const std::string& commit_id);
  Repo Build() &&;

 private:
  Repo repo_;
};

}  // namespace hubwatch::fakehub
