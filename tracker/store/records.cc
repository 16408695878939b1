#include "tracker/store/records.h"

namespace hubwatch::store {
namespace {

constexpr std::string_view kStateNames[] = {"ok",      "gated",    "renamed",
                                            "deleted", "disabled", "erroring"};

}  // namespace

std::string_view RepoStateName(RepoState s) { return kStateNames[static_cast<int>(s)]; }

bool ParseRepoState(std::string_view name, RepoState& state) {
  for (size_t i = 0; i < std::size(kStateNames); ++i) {
    if (kStateNames[i] == name) {
      state = static_cast<RepoState>(i);
      return true;
    }
  }
  return false;
}

}  // namespace hubwatch::store
