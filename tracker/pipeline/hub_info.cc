#include "tracker/pipeline/hub_info.h"

#include <algorithm>
#include <utility>

#include "tracker/diff/json_text.h"

namespace hubwatch::pipeline {

bool HubInfoDue(const store::HubInfo& info, bool head_moved, int64_t now,
                const PollerOptions& options) {
  if (options.hub_info_interval_s <= 0) return false;
  return info.fetched_at == 0 || head_moved || now - info.fetched_at >= options.hub_info_interval_s;
}

store::HubInfo HubInfoOf(const hub::ModelInfo& info, int64_t now) {
  auto count = [](const std::optional<uint64_t>& n) -> std::optional<int64_t> {
    if (!n) return std::nullopt;
    return static_cast<int64_t>(std::min<uint64_t>(*n, INT64_MAX));
  };
  store::HubInfo out;
  out.downloads = count(info.downloads);
  out.likes = count(info.likes);
  for (const std::string& tag : info.tags) {
    if (out.tags.size() == store::kMaxHubTags) break;
    out.tags.push_back(diff::CutText(tag, store::kMaxHubTagBytes));
  }
  out.fetched_at = now;
  return out;
}

void ReadHubInfo(hub::HubClient& hub, const std::string& repo, const store::HubInfo& stored,
                 int64_t now, std::function<void(HubInfoRead)> done) {
  hub::ModelInfoOptions options;
  options.expand = {"downloads", "likes", "tags"};
  hub.GetModelInfo(repo, std::move(options),
                   [stored, now, done = std::move(done)](hub::HubResult<hub::ModelInfo> r,
                                                         const hub::CallStats& stats) {
                     HubInfoRead read;
                     read.stats = stats;
                     if (r.ok()) {
                       read.info = HubInfoOf(*r, now);
                     } else if (r.error().kind == hub::HubErrorKind::kShutdown) {
                       read.stopped = r.error();
                     } else {
                       read.info = stored;
                       read.info.fetched_at = now;
                       read.failure = r.error().ToString();
                     }
                     done(std::move(read));
                   });
}

}  // namespace hubwatch::pipeline
