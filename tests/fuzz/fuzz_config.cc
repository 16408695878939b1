// libFuzzer target: the configuration file (daemon/config.h ParseConfig), what `serve`,
// `poll-once` and every store command read first, and SIGHUP re-reads under a running daemon.
// Invariants: nothing throws (an exception escaping is a crash here); a refusal is bad input
// with a message of at most 512 bytes without control characters (it goes to a terminal or a
// log, and quotes at most ~80 characters of the value); an accepted configuration holds only
// what the parser promises: valid repo ids listed once, 1 to 16 valid ref names each, numbers in
// their ranges.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

#include "daemon/config/config.h"
#include "tests/fuzz/fuzz_check.h"
#include "tracker/hub/repo_id.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  hubwatch::Result<hubwatch::config::DaemonConfig> c =
      hubwatch::config::ParseConfig(text, "/etc/hw");
  if (!c.ok()) {
    const std::string& m = c.error().message;
    FUZZ_CHECK(c.error().code == hubwatch::ErrorCode::kInvalidInput,
               "an error that is not bad input");
    FUZZ_CHECK(!m.empty() && m.size() <= 512, "an empty or unbounded message");
    for (unsigned char ch : m)
      FUZZ_CHECK(ch >= 0x20 && ch != 0x7f, "a control character in a message");
    return 0;
  }
  std::set<std::string> ids;
  for (const hubwatch::config::RepoConfig& r : c->repos) {
    FUZZ_CHECK(hubwatch::hub::ValidateRepoId(r.id).ok(), "an invalid repo id accepted");
    FUZZ_CHECK(ids.insert(r.id).second, "a repo listed twice accepted");
    FUZZ_CHECK(!r.refs.empty() && r.refs.size() <= hubwatch::hub::kMaxTrackedRefs, "ref count");
    for (const std::string& ref : r.refs) {
      FUZZ_CHECK(hubwatch::hub::ValidateRefName(ref).ok(), "an invalid ref accepted");
    }
  }
  const hubwatch::config::PollConfig& p = c->poll;
  FUZZ_CHECK(p.interval_s >= 1 && p.interval_s <= 30 * 24 * 3600, "poll.interval_s range");
  FUZZ_CHECK(p.settle_window_s >= 0 && p.settle_window_s <= 30 * 86400, "settle_window_s range");
  FUZZ_CHECK(p.max_concurrent >= 1 && c->hub.max_concurrent >= 1, "concurrency below 1");
  FUZZ_CHECK(c->hub.max_safetensors_header_bytes <= 100'000'000, "header cap above 100 MB");
  FUZZ_CHECK(!c->store.empty() && c->store.find('\0') == std::string::npos, "store path");
  for (const hubwatch::config::SubscriptionConfig& s : c->subscriptions) {
    FUZZ_CHECK(!s.url.empty() && !s.secret_file.empty(), "a subscription without url or secret");
  }
  return 0;
}
