#pragma once

// Snapshot: what the diff engines see of one revision - its manifest, the contents of its
// tracked small files, and the parsed headers of its safetensors files. Files whose content
// could not be had carry the reason instead, so the diff reports an error change for them
// rather than a removal. Plain value type.

#include <map>
#include <string>

#include "estimator/formats/safetensors_header.h"
#include "tracker/diff/manifest.h"

namespace hubwatch::pipeline {

struct Snapshot {
  std::string sha;
  diff::Manifest manifest;
  std::map<std::string, std::string> files;          // path -> content (tracked small files)
  std::map<std::string, SafetensorsHeader> headers;  // LFS sha256 -> header
  std::map<std::string, std::string> unreadable;     // path -> why its content is missing

  // The content of `path`, or nullopt when the revision has no such file (or it is unreadable).
  std::optional<std::string> File(const std::string& path) const {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  }
};

}  // namespace hubwatch::pipeline
