#include "tracker/hub/hub_settings.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "tracker/hub/http_types.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

std::string CleanToken(std::string token) {
  std::erase(token, '\r');
  std::erase(token, '\n');
  const size_t begin = token.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = token.find_last_not_of(" \t");
  return token.substr(begin, end - begin + 1);
}

bool Truthy(const std::optional<std::string>& value) {
  if (!value) return false;
  for (const char* yes : {"1", "ON", "YES", "TRUE"}) {
    if (EqualsIgnoreCase(*value, yes)) return true;
  }
  return false;
}

// Expands a leading "~" and $VAR / ${VAR}.
std::string ExpandPath(const std::string& path, const EnvLookup& env) {
  std::string out;
  size_t i = 0;
  if (path.starts_with("~") && (path.size() == 1 || path[1] == '/')) {
    out = env("HOME").value_or("");
    i = 1;
  }
  while (i < path.size()) {
    if (path[i] != '$') {
      out += path[i++];
      continue;
    }
    size_t start = i + 1, end = start;
    const bool braced = start < path.size() && path[start] == '{';
    if (braced)
      end = path.find('}', ++start);
    else
      while (end < path.size() &&
             (std::isalnum(static_cast<unsigned char>(path[end])) || path[end] == '_'))
        ++end;
    if (end == std::string::npos || end == start) {
      out += path[i++];
      continue;
    }
    out += env(path.substr(start, end - start)).value_or("");
    i = braced ? end + 1 : end;
  }
  return out;
}

std::string DefaultTokenPath(const EnvLookup& env) {
  if (auto hf_home = env("HF_HOME"); hf_home && !hf_home->empty()) {
    return ExpandPath(*hf_home, env) + "/token";
  }
  if (auto xdg = env("XDG_CACHE_HOME"); xdg && !xdg->empty()) {
    return ExpandPath(*xdg, env) + "/huggingface/token";
  }
  return ExpandPath("~/.cache/huggingface/token", env);
}

// A readable file of at most 16 MiB holding at least one PEM certificate.
Status CheckCaFile(const std::string& path) {
  constexpr uintmax_t kMaxCaFileBytes = 16 << 20;
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  const uintmax_t size = regular ? std::filesystem::file_size(path, ec) : 0;
  std::ifstream in(path, std::ios::binary);
  if (!regular || ec || !in) {
    return Error::InvalidInput("hub.ca_file " + path + " cannot be read (not a readable file)");
  }
  if (size > kMaxCaFileBytes) return Error::InvalidInput("hub.ca_file " + path + " is over 16 MiB");
  std::stringstream content;
  content << in.rdbuf();
  if (content.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return Error::InvalidInput("hub.ca_file " + path + " holds no PEM certificate");
  }
  return Status::Ok();
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<HubSettings> LoadHubSettings(const HubConfig& config, const EnvLookup& env) {
  HubSettings settings;
  std::string endpoint =
      config.endpoint ? *config.endpoint : env("HF_ENDPOINT").value_or("https://huggingface.co");
  while (endpoint.ends_with('/')) endpoint.pop_back();
  if (!endpoint.starts_with("http://") && !endpoint.starts_with("https://")) {
    return Error::InvalidInput("hub endpoint must be an http(s) URL, got \"" + endpoint + "\"");
  }
  settings.endpoint = endpoint;

  settings.offline = config.offline
                         ? *config.offline
                         : Truthy(env("HF_HUB_OFFLINE")) || Truthy(env("TRANSFORMERS_OFFLINE"));

  auto take = [&](std::optional<std::string> value, std::string source) {
    if (!settings.token.empty() || !value) return;
    std::string cleaned = CleanToken(std::move(*value));
    if (cleaned.empty()) return;
    settings.token = Secret(std::move(cleaned));
    settings.token_source = std::move(source);
  };
  take(config.token, "config");
  take(env("HF_TOKEN"), "HF_TOKEN");
  take(env("HUGGING_FACE_HUB_TOKEN"), "HUGGING_FACE_HUB_TOKEN");
  if (settings.token.empty()) {
    const auto explicit_path = env("HF_TOKEN_PATH");
    const std::string path = explicit_path && !explicit_path->empty()
                                 ? ExpandPath(*explicit_path, env)
                                 : DefaultTokenPath(env);
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      std::ifstream in(path, std::ios::binary);
      std::stringstream content;
      content << in.rdbuf();
      if (!in) return Error::Io("token file " + path + " exists but cannot be read");
      take(content.str(), "file " + path);
    }
  }
  if (SplitUrl(endpoint).scheme == "http" && !settings.token.empty() &&
      !IsLoopbackHost(HostOf(endpoint))) {
    return Error::InvalidInput("hub endpoint " + endpoint +
                               " is cleartext http:// to a host that is not loopback, and a token "
                               "is set (" +
                               settings.token_source +
                               "): it would cross the network unencrypted; use https");
  }
  if (config.ca_file) {
    if (Status s = CheckCaFile(*config.ca_file); !s.ok()) return s.error();
    settings.ca_file = *config.ca_file;
  }
  return settings;
}

std::string RedactSecret(std::string text, const Secret& secret) {
  if (secret.empty()) return text;
  const std::string& value = secret.reveal();
  for (size_t pos = text.find(value); pos != std::string::npos; pos = text.find(value, pos)) {
    text.replace(pos, value.size(), "<redacted>");
    pos += 10;
  }
  return text;
}

}  // namespace hubwatch::hub
