#include "cli_common.h"

#include <charconv>
#include <ctime>

namespace hubwatch::cli {

Status ParseCommon(const Args& args, CommonFlags& flags, std::vector<std::string>& positional,
                   const std::set<std::string>& value_flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      flags.help = true;
    } else if (a == "--json") {
      flags.json = true;
    } else if (a == "--config" || value_flags.count(a)) {
      if (i + 1 >= args.size()) return Error::InvalidInput(a + " needs a value");
      (a == "--config" ? flags.config : flags.values[a]) = args[++i];
    } else if (!a.empty() && a[0] == '-') {
      return Error::InvalidInput("unknown option " + a + " (see --help)");
    } else {
      positional.push_back(a);
    }
  }
  return Status::Ok();
}

Result<Opened> OpenStoreFromConfig(const CommonFlags& flags) {
  if (flags.config.empty()) return Error::InvalidInput("--config FILE is required");
  Result<DaemonConfig> config = LoadConfig(flags.config);
  if (!config.ok()) return config.error();
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(config->store);
  if (!store.ok()) return store.error();
  return Opened{std::move(config).value(), std::move(store).value()};
}

Result<int64_t> ParseTime(const std::string& text) {
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec == std::errc() && end == text.data() + text.size()) return seconds;
  std::tm tm{};
  const char* rest = nullptr;
  if (text.size() == 10) rest = strptime(text.c_str(), "%Y-%m-%d", &tm);
  if (!rest) {
    tm = {};
    rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (rest && *rest == '.') {
      while (*++rest >= '0' && *rest <= '9') {
      }
    }
    if (rest && *rest != 'Z') rest = nullptr;
  }
  if (!rest) {
    return Error::InvalidInput("'" + text +
                               "' is not a time (RFC 3339, YYYY-MM-DD or Unix seconds)");
  }
  return static_cast<int64_t>(timegm(&tm));
}

int Fail(std::ostream& err, const std::string& command, const Error& error) {
  err << "hubwatch " << command << ": " << error.message << "\n";
  return error.code == ErrorCode::kInvalidInput ? 2 : 1;
}

int Fail(std::ostream& err, const std::string& command, const Status& status) {
  return Fail(err, command, status.error());
}

}  // namespace hubwatch::cli
