#pragma once

// The configuration's "hub" object: endpoint, token_file, ca_file, max_concurrent,
// max_safetensors_header_bytes, webhook_secret_file (README "The configuration file"). Paths are
// resolved against the configuration's directory; files are read later (hub.ca_file by
// hub::LoadHubSettings, which refuses one it cannot use).

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "daemon/config/config.h"
#include "estimator/base/result.h"

namespace hubwatch::config {

Status ParseHubKeys(const nlohmann::json& hub_object, const std::string& base_dir,
                    HubOptionsConfig& hub);

}  // namespace hubwatch::config
