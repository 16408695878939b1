#pragma once

// The repo-id check every HubClient call makes before it sends anything; internal to the client.

#include <string>

#include "tracker/hub/asio_clock.h"
#include "tracker/hub/client.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::hub {

// True when `repo` is a valid id; otherwise `done` gets kInvalidArgument on a later loop turn
// (never inside the call) and false is returned.
template <class T>
bool CheckRepo(TimerClock& clock, const std::string& repo, const HubCallback<T>& done) {
  Status valid = ValidateRepoId(repo);
  if (valid.ok()) return true;
  HubError error;
  error.kind = HubErrorKind::kInvalidArgument;
  error.detail = valid.error().message;
  clock.RunAt(clock.Now(), [done, error] { done(error, CallStats{}); });
  return false;
}

}  // namespace hubwatch::hub
