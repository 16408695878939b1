#include "tracker/diff/manifest.h"

namespace hubwatch::diff {

std::map<std::string_view, const ManifestEntry*> IndexByPath(const Manifest& manifest) {
  std::map<std::string_view, const ManifestEntry*> index;
  for (const ManifestEntry& entry : manifest) index.emplace(entry.path, &entry);
  return index;
}

}  // namespace hubwatch::diff
