#include "daemon/cli_common.h"

#include <charconv>
#include <ctime>
#include <fstream>

#include "estimator/base/text.h"
#include "tracker/advisory/time_text.h"
#include "tracker/diff/terminal_text.h"

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
      return Error::InvalidInput("unknown option " + Clip(a) + " (see --help)");
    } else {
      positional.push_back(a);
    }
  }
  return Status::Ok();
}

Result<Opened> OpenStoreFromConfig(const CommonFlags& flags) {
  if (flags.config.empty()) return Error::InvalidInput("--config FILE is required");
  Result<config::DaemonConfig> config = config::LoadConfig(flags.config);
  if (!config.ok()) return config.error();
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(config->store);
  if (!store.ok()) return store.error();
  return Opened{std::move(config).value(), std::move(store).value()};
}

Result<int64_t> ParseTime(const std::string& text) {
  std::optional<int64_t> t = advisory::ParseTime(text.size() == 10 ? text + "T00:00:00Z" : text);
  if (!t) {
    return Error::InvalidInput("'" + Clip(text) +
                               "' is not a time (RFC 3339, YYYY-MM-DD or Unix seconds)");
  }
  return *t;
}

Result<std::string> ReadFileUpTo(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Io(Clip(path) + ": cannot open for reading");
  std::string data;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    data.append(buf, static_cast<size_t>(in.gcount()));
    if (data.size() > max_bytes) {
      return Error::InvalidInput(Clip(path) + ": larger than " + std::to_string(max_bytes) +
                                 " bytes");
    }
  }
  if (in.bad()) return Error::Io(Clip(path) + ": read error");
  return data;
}

int Fail(std::ostream& err, const std::string& command, const Error& error) {
  // Every value a message quotes is clipped where it is quoted (Clip: about 80 bytes); this is
  // the backstop for one that is not, and what reaches the terminal is escaped.
  constexpr size_t kMaxMessageBytes = 2048;
  err << "hubwatch " << command << ": "
      << diff::EscapeForTerminal(Clip(error.message, kMaxMessageBytes)) << "\n";
  return error.code == ErrorCode::kInvalidInput ? 2 : 1;
}

int Fail(std::ostream& err, const std::string& command, const Status& status) {
  return Fail(err, command, status.error());
}

}  // namespace hubwatch::cli
