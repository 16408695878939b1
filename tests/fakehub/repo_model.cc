#include "tests/fakehub/repo_model.h"

#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "estimator/formats/safetensors_header.h"
#include "tests/fakehub/hashing.h"

namespace hubwatch::fakehub {
namespace {

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Deterministic bytes of a virtual region: word w is Mix(seed, w), little-endian.
void FillVirtual(uint64_t seed, uint64_t offset, size_t n, char* out) {
  while (n > 0) {
    const uint64_t word = Mix(seed * 0x9e3779b97f4a7c15ull + offset / 8 + 1);
    const size_t in_word = offset % 8;
    const size_t take = std::min<size_t>(8 - in_word, n);
    for (size_t i = 0; i < take; ++i) {
      out[i] = static_cast<char>((word >> (8 * (in_word + i))) & 0xff);
    }
    out += take;
    offset += take;
    n -= take;
  }
}

bool IsSha256Hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) ||
        std::isupper(static_cast<unsigned char>(c)))
      return false;
  }
  return true;
}

void FillLfsIdentity(FileBlob& blob) {
  blob.lfs_pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:" + blob.sha256 +
                     "\nsize " + std::to_string(blob.size) + "\n";
  blob.pointer_size = blob.lfs_pointer.size();
  blob.blob_oid = GitBlobOid(blob.lfs_pointer);
  blob.cdn_etag = Sha256Hex("xet:" + blob.sha256);
}

}  // namespace

const std::string& LazyPrefix::Get() const {
  std::call_once(once_, [this] { bytes_ = build(); });
  return bytes_;
}

void FileBlob::Read(uint64_t offset, size_t n, char* out) const {
  if (kind == BlobKind::kInline) {
    std::memcpy(out, inline_content.data() + offset, n);
    return;
  }
  const uint64_t prefix = prefix_size();
  if (offset < prefix) {
    const std::string& bytes = lazy_prefix ? lazy_prefix->Get() : safetensors_prefix;
    const size_t take = std::min<uint64_t>(prefix - offset, n);
    std::memcpy(out, bytes.data() + offset, take);
    out += take;
    offset += take;
    n -= take;
  }
  if (n > 0) FillVirtual(seed, offset, n, out);
}

BlobPtr MakeInlineBlob(std::string content) {
  auto blob = std::make_shared<FileBlob>();
  blob->kind = BlobKind::kInline;
  blob->size = content.size();
  blob->sha256 = Sha256Hex(content);
  blob->blob_oid = GitBlobOid(content);
  blob->cdn_etag = blob->blob_oid;
  blob->inline_content = std::move(content);
  return blob;
}

BlobPtr MakeLfsBlob(uint64_t size, std::string sha256, uint64_t seed) {
  auto blob = std::make_shared<FileBlob>();
  blob->kind = BlobKind::kLfs;
  blob->size = size;
  blob->sha256 = std::move(sha256);
  blob->seed = seed;
  FillLfsIdentity(*blob);
  return blob;
}

Result<BlobPtr> MakePrefixedLfsBlob(BlobKind kind, std::shared_ptr<const LazyPrefix> prefix,
                                    uint64_t size, std::string sha256, uint64_t seed) {
  if (!IsSha256Hex(sha256)) return Error::InvalidInput("sha256 must be 64 lower-case hex digits");
  if (size < prefix->size) {
    return Error::InvalidInput("size " + std::to_string(size) + " is shorter than the " +
                               std::to_string(prefix->size) + "-byte header");
  }
  auto blob = std::make_shared<FileBlob>();
  blob->kind = kind;
  blob->size = size;
  blob->lazy_prefix = std::move(prefix);
  blob->sha256 = std::move(sha256);
  blob->seed = seed;
  FillLfsIdentity(*blob);
  return BlobPtr(blob);
}

Result<BlobPtr> MakeSafetensorsBlob(const SafetensorsManifest& manifest) {
  if (!IsSha256Hex(manifest.sha256)) {
    return Error::InvalidInput("safetensors manifest: sha256 must be 64 lower-case hex digits");
  }
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!manifest.metadata.empty()) header["__metadata__"] = manifest.metadata;
  auto blob = std::make_shared<FileBlob>();
  uint64_t offset = 0;
  for (const SafetensorsTensorSpec& t : manifest.tensors) {
    const std::string dtype = t.dtype.empty() ? manifest.dtype : t.dtype;
    const std::optional<int> bits = SafetensorsDtypeBits(dtype);
    if (!bits) return Error::InvalidInput("safetensors manifest: unknown dtype " + dtype);
    uint64_t elements = 1;
    for (uint64_t d : t.shape) elements *= d;
    const uint64_t bytes = (elements * static_cast<uint64_t>(*bits) + 7) / 8;
    header[t.name] = {
        {"dtype", dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    blob->parameters[dtype] += elements;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i)
    prefix[static_cast<size_t>(i)] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  prefix += json;
  blob->kind = BlobKind::kSafetensors;
  blob->size = prefix.size() + offset;
  if (manifest.declared_size && *manifest.declared_size != blob->size) {
    return Error::InvalidInput("safetensors manifest: declared size " +
                               std::to_string(*manifest.declared_size) +
                               " but the header and data "
                               "make " +
                               std::to_string(blob->size) + " bytes");
  }
  blob->safetensors_prefix = std::move(prefix);
  blob->sha256 = manifest.sha256;
  blob->seed = manifest.seed;
  FillLfsIdentity(*blob);
  return BlobPtr(blob);
}

std::optional<int64_t> ParseIsoTime(const std::string& text) {
  std::tm tm{};
  int millis = 0;
  char zone = 0;
  int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon,
                      &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis, &zone);
  if (n != 8) {
    n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &zone);
    if (n != 7) return std::nullopt;
  }
  if (zone != 'Z') return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm));
}

std::string FormatIsoTime(int64_t unix_seconds) {
  const time_t t = static_cast<time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return buf;
}

Status RepoBuilder::AddCommit(CommitSpec spec) {
  auto bad = [&](const std::string& why) {
    return Error::InvalidInput(repo_.id + " commit \"" + spec.title + "\": " + why);
  };
  auto time = ParseIsoTime(spec.date);
  if (!time) return bad("date \"" + spec.date + "\" is not ISO-8601 UTC");
  const int parent = repo_.main_history.empty() ? -1 : repo_.main_history.back();
  auto files = std::make_shared<FileMap>(
      parent < 0 ? FileMap{} : *repo_.commits[static_cast<size_t>(parent)].files);
  for (auto& [path, blob] : spec.add) {
    if (files->count(path)) return bad("adds " + path + ", which exists");
    (*files)[path] = blob;
  }
  for (auto& [path, blob] : spec.change) {
    if (!files->count(path)) return bad("changes " + path + ", which does not exist");
    (*files)[path] = blob;
  }
  for (const std::string& path : spec.remove) {
    if (!files->erase(path)) return bad("deletes " + path + ", which does not exist");
  }
  Commit commit;
  commit.title = std::move(spec.title);
  commit.message = std::move(spec.message);
  commit.authors = std::move(spec.authors);
  commit.date = std::move(spec.date);
  commit.time = *time;
  commit.parent = parent;
  commit.files = std::move(files);
  const std::string parent_id = parent < 0 ? "" : repo_.commits[static_cast<size_t>(parent)].id;
  commit.id = spec.id.empty() ? Sha1Hex("commit\n" + repo_.id + "\n" + parent_id + "\n" +
                                        commit.title + "\n" + commit.message + "\n" + commit.date)
                              : spec.id;
  if (commit.id.size() != 40) return bad("commit id must be 40 hex digits");
  for (const Commit& c : repo_.commits) {
    if (c.id == commit.id) return bad("duplicate commit id " + commit.id);
  }
  if (parent >= 0 && commit.time < repo_.commits[static_cast<size_t>(parent)].time) {
    return bad("is dated before its parent");
  }
  repo_.commits.push_back(std::move(commit));
  repo_.main_history.push_back(static_cast<int>(repo_.commits.size() - 1));
  return Status::Ok();
}

Status RepoBuilder::AddRef(bool is_tag, const std::string& name, const std::string& commit_id) {
  for (size_t i = 0; i < repo_.commits.size(); ++i) {
    if (repo_.commits[i].id == commit_id) {
      (is_tag ? repo_.tag_refs : repo_.branches)[name] = static_cast<int>(i);
      return Status::Ok();
    }
  }
  return Error::InvalidInput(repo_.id + ": ref " + name + " points at unknown commit " + commit_id);
}

Repo RepoBuilder::Build() && {
  if (repo_.internal_id.empty()) repo_.internal_id = Sha1Hex("repo " + repo_.id).substr(0, 24);
  if (repo_.created_at.empty() && !repo_.commits.empty())
    repo_.created_at = repo_.commits.front().date;
  return std::move(repo_);
}

}  // namespace hubwatch::fakehub
