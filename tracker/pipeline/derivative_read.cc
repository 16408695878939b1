#include "tracker/pipeline/derivative_read.h"

#include <algorithm>
#include <map>
#include <memory>
#include <regex>

namespace hubwatch::pipeline {
namespace {

bool IsSidecar(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.starts_with("mmproj") || lower.starts_with("mtp-") ||
         lower.find("imatrix") != std::string::npos;
}

// One read in flight: the facet files one at a time, or the GGUF metadata.
class FacetRead : public std::enable_shared_from_this<FacetRead> {
 public:
  FacetRead(hub::HubClient& hub, DerivativeRead read,
            std::function<void(DerivativeRead, int)> done)
      : hub_(hub), read_(std::move(read)), done_(std::move(done)) {}

  void Start(const std::vector<std::string>& files) {
    std::vector<std::string> facet_files;
    for (const std::string& path : derivatives::FacetFiles()) {
      if (std::find(files.begin(), files.end(), path) != files.end()) facet_files.push_back(path);
    }
    if (!facet_files.empty()) {
      read_.source = "files";
      paths_ = std::move(facet_files);
      return ReadNextFile();
    }
    const std::string gguf = GgufFileToRead(files);
    if (gguf.empty()) {
      read_.source = "none";
      read_.facets = derivatives::FacetSet{};
      return End();
    }
    read_.source = "gguf:" + gguf;
    hub_.ReadGgufMetadata(read_.id, read_.head, gguf,
                          [self = shared_from_this()](hub::HubResult<hub::GgufMetadataInfo> info,
                                                      const hub::CallStats& stats) {
                            self->requests_ += stats.requests;
                            if (info.ok()) {
                              self->read_.facets = derivatives::FacetsOfGguf(info->metadata);
                            } else {
                              self->read_.error = info.error().ToString();
                            }
                            self->End();
                          });
  }

 private:
  void ReadNextFile() {
    if (contents_.size() == paths_.size()) {
      read_.facets = derivatives::FacetsOfFiles(contents_);
      return End();
    }
    const std::string path = paths_[contents_.size()];
    hub_.ResolveGet(
        read_.id, read_.head, path,
        [self = shared_from_this(), path](hub::HubResult<hub::FileContent> file,
                                          const hub::CallStats& stats) {
          self->requests_ += stats.requests;
          if (!file.ok()) {
            self->read_.error = path + ": " + file.error().ToString();
            return self->End();
          }
          self->contents_[path] = std::move(file->body);
          self->ReadNextFile();
        },
        /*use_etag_cache=*/false);
  }

  void End() {
    if (auto done = std::exchange(done_, nullptr)) done(std::move(read_), requests_);
  }

  hub::HubClient& hub_;
  DerivativeRead read_;
  std::function<void(DerivativeRead, int)> done_;
  std::vector<std::string> paths_;
  std::map<std::string, std::string> contents_;
  int requests_ = 0;
};

}  // namespace

void ReadDerivativeAt(hub::HubClient& hub, DerivativeRead read, std::vector<std::string> files,
                      std::function<void(DerivativeRead, int requests)> done) {
  std::make_shared<FacetRead>(hub, std::move(read), std::move(done))->Start(files);
}

std::string GgufFileToRead(const std::vector<std::string>& files) {
  static const std::regex kLaterShard(R"(-(\d{5})-of-(\d{5})\.gguf$)");
  std::vector<std::string> candidates;
  for (const std::string& path : files) {
    if (!path.ends_with(".gguf") || IsSidecar(path)) continue;
    std::smatch shard;
    if (std::regex_search(path, shard, kLaterShard) && shard[1] != "00001") continue;
    candidates.push_back(path);
  }
  if (candidates.empty()) return "";
  return *std::min_element(candidates.begin(), candidates.end());
}

}  // namespace hubwatch::pipeline
