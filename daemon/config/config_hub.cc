#include "daemon/config/config_hub.h"

#include <nlohmann/json.hpp>

#include "daemon/config/config_json.h"

namespace hubwatch::config {

using field::Bad;
using field::CheckKeys;
using field::Path;
using field::PositiveInt;
using field::String;

Status ParseHubKeys(const nlohmann::json& h, const std::string& base_dir, HubOptionsConfig& hub) {
  if (!h.is_object()) return Bad("hub must be an object");
  if (Status s = CheckKeys(h, "hub",
                           {"endpoint", "token_file", "ca_file", "max_concurrent",
                            "max_safetensors_header_bytes", "webhook_secret_file"});
      !s.ok()) {
    return s;
  }
  if (h.contains("endpoint")) {
    Result<std::string> e = String(h["endpoint"], "hub.endpoint");
    if (!e.ok()) return e.error();
    if (!e->starts_with("http://") && !e->starts_with("https://")) {
      return Bad("hub.endpoint must be an http(s) URL, got " + QuoteForError(*e));
    }
    hub.endpoint = *e;
  }
  if (h.contains("token_file")) {
    Result<std::string> t = Path(h["token_file"], "hub.token_file", base_dir);
    if (!t.ok()) return t.error();
    hub.token_file = *t;
  }
  if (h.contains("ca_file")) {  // read (and refused when unusable) by hub::LoadHubSettings
    Result<std::string> t = Path(h["ca_file"], "hub.ca_file", base_dir);
    if (!t.ok()) return t.error();
    hub.ca_file = *t;
  }
  if (h.contains("webhook_secret_file")) {
    Result<std::string> t = Path(h["webhook_secret_file"], "hub.webhook_secret_file", base_dir);
    if (!t.ok()) return t.error();
    hub.webhook_secret_file = *t;
  }
  if (h.contains("max_concurrent")) {
    Result<int64_t> n = PositiveInt(h["max_concurrent"], "hub.max_concurrent", 1024);
    if (!n.ok()) return n.error();
    hub.max_concurrent = static_cast<int>(*n);
  }
  if (h.contains("max_safetensors_header_bytes")) {
    Result<int64_t> n = PositiveInt(h["max_safetensors_header_bytes"],
                                    "hub.max_safetensors_header_bytes", 100'000'000);
    if (!n.ok()) return n.error();
    hub.max_safetensors_header_bytes = static_cast<uint64_t>(*n);
  }
  return Status::Ok();
}

}  // namespace hubwatch::config
