#include "tracker/store/pins.h"

#include "tracker/store/since.h"

namespace hubwatch::store {

Result<std::vector<PinStatus>> PinStatuses(Store& store, const RepoRecord& repo) {
  std::vector<PinStatus> out;
  if (repo.pins.empty()) return out;
  Result<std::optional<RevisionRecord>> latest = store.revisions().LatestRevision(repo.id);
  if (!latest.ok()) return latest.error();
  for (const std::string& pin : repo.pins) {
    PinStatus status{.pin = pin, .newest = *latest ? (*latest)->sha : std::string()};
    Result<std::string> sha = ResolveRevision(store, repo.id, pin);
    if (!sha.ok()) {
      if (sha.error().code != ErrorCode::kInvalidInput) return sha.error();
      status.problem = sha.error().message;
      out.push_back(std::move(status));
      continue;
    }
    status.sha = *sha;
    Result<int64_t> n = store.advisories().CountAffecting(repo.id, status.sha);
    if (!n.ok()) return n.error();
    status.advisories = *n;
    out.push_back(std::move(status));
  }
  return out;
}

}  // namespace hubwatch::store
