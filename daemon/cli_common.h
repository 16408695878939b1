#pragma once

// What the commands share: flag parsing (--config, --json, --help and named value flags),
// opening the store a config names, time arguments, reading a file, and the one-line error.

#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "daemon/commands.h"
#include "daemon/config/config.h"
#include "estimator/base/result.h"
#include "tracker/store/store.h"

namespace hubwatch::cli {

struct CommonFlags {
  std::string config;                         // --config FILE
  bool json = false;                          // --json
  bool help = false;                          // --help / -h
  std::map<std::string, std::string> values;  // the command's own value flags
};

// Splits args into flags and positional arguments; `value_flags` take one value each.
Status ParseCommon(const Args& args, CommonFlags& flags, std::vector<std::string>& positional,
                   const std::set<std::string>& value_flags);

struct Opened {
  config::DaemonConfig config;
  std::unique_ptr<store::Store> store;
};
// REQUIRES: flags.config set (else an error says so).
Result<Opened> OpenStoreFromConfig(const CommonFlags& flags);

// RFC 3339 ("2024-05-01T12:00:00Z"), a date ("2024-05-01", midnight UTC) or Unix seconds.
Result<int64_t> ParseTime(const std::string& text);

// A file's bytes; an error (naming the path) when it cannot be read or exceeds max_bytes.
Result<std::string> ReadFileUpTo(const std::string& path, size_t max_bytes);

// Prints "hubwatch <command>: <message>" and returns 2 (bad input) or 1 (anything else).
int Fail(std::ostream& err, const std::string& command, const Status& status);
int Fail(std::ostream& err, const std::string& command, const Error& error);

}  // namespace hubwatch::cli
