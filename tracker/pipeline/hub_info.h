#pragma once

// The repo's Hub info - the download count (the Hub's 30-day total), likes and tags that the
// model page shows - read with one model info request by a good poll when it is due.
//
// Thread safety: ReadHubInfo runs on the hub client's loop thread, as the poll does; the other
// functions are pure.

#include <cstdint>
#include <functional>
#include <optional>

#include "tracker/hub/client.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/records.h"

namespace hubwatch::pipeline {

// Whether the Hub info is due at `now`: never read, older than options.hub_info_interval_s, or
// the head moved (a new model card may bring new tags). Never when the interval is 0.
bool HubInfoDue(const store::HubInfo& info, bool head_moved, int64_t now,
                const PollerOptions& options);

// The Hub info of a model info answer at `now`, within the store's bounds: at most
// store::kMaxHubTags tags of at most store::kMaxHubTagBytes each, counts clamped to int64.
store::HubInfo HubInfoOf(const hub::ModelInfo& info, int64_t now);

// What ReadHubInfo gives back.
struct HubInfoRead {
  store::HubInfo info;  // to store: the one read, or on a failure the stored one read "now"
  std::optional<std::string> failure;    // why it was not read (the poll goes on without it)
  std::optional<hub::HubError> stopped;  // kShutdown: the service is stopping
  hub::CallStats stats;
};

// Reads `repo`'s model info (expand=downloads,likes,tags). A failure keeps `stored`'s counts
// and marks them read at `now`, so they are tried again after the interval, not every poll.
void ReadHubInfo(hub::HubClient& hub, const std::string& repo, const store::HubInfo& stored,
                 int64_t now, std::function<void(HubInfoRead)> done);

}  // namespace hubwatch::pipeline
