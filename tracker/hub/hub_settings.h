#pragma once

// Where the Hub is and who we are to it, from configuration and the environment, the way
// huggingface_hub reads them:
//   endpoint: config, else HF_ENDPOINT, else https://huggingface.co (trailing '/' stripped)
//   token:    config, else HF_TOKEN, else HUGGING_FACE_HUB_TOKEN, else the file at HF_TOKEN_PATH
//             (default $HF_HOME/token, HF_HOME defaulting to $XDG_CACHE_HOME/huggingface or
//             ~/.cache/huggingface); '\r'/'\n' removed, whitespace stripped, empty means none
//   offline:  config, else HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE truthy (1/ON/YES/TRUE)
//   ca_file:  config only: a PEM bundle of the CAs trusted instead of the system store ("" = the
//             system store). Certificate and host-name checks are always on; there is no switch.
// A token is refused with a cleartext http:// endpoint that is not loopback (it would cross the
// network unencrypted); the exchange enforces the same on every request it sends.
// The token lives in a Secret, whose only accessor is reveal(): it prints as "<redacted>", and
// RedactSecret scrubs it from any text before that text reaches a log or an error.

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::hub {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  bool empty() const { return value_.empty(); }
  // The raw value, for the Authorization header only.
  const std::string& reveal() const { return value_; }
  friend std::ostream& operator<<(std::ostream& os, const Secret&) { return os << "<redacted>"; }

 private:
  std::string value_;
};

struct HubSettings {
  std::string endpoint = "https://huggingface.co";
  Secret token;
  std::string token_source;  // "config", "HF_TOKEN", "file /path" or "" (never the token)
  bool offline = false;
  std::string ca_file;  // "" = the system's CA store
};

struct HubConfig {
  std::optional<std::string> endpoint;
  std::optional<std::string> token;
  std::optional<bool> offline;
  std::optional<std::string> ca_file;
};

// Reads one environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnvironment();

// Errors when HF_TOKEN_PATH names a file that exists but cannot be read, the endpoint is not an
// http(s) URL, a token would go over cleartext to a host that is not loopback, or ca_file cannot
// be read or holds no PEM certificate.
Result<HubSettings> LoadHubSettings(const HubConfig& config, const EnvLookup& env);

// `text` with every occurrence of the secret replaced by "<redacted>".
std::string RedactSecret(std::string text, const Secret& secret);

}  // namespace hubwatch::hub
