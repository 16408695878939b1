#pragma once

// The daemon's log: spdlog, one line per event on stderr.
//   text      "2026-12-02 13:12:35.120 info  google/gemma-2-9b-it@1a2b3c4: 3 changes"
//   journal   under systemd ($JOURNAL_STREAM set): "<6>google/gemma-2-9b-it@1a2b3c4: 3 changes",
//             the sd-daemon priority prefix and no timestamp (journald stamps it)
//   json      {"ts":"2026-12-02T13:12:35.120Z","level":"info","msg":"..."} for machines
// Text and journal lines escape every message (diff::EscapeForTerminal): control characters,
// C1 controls and invalid UTF-8 that upstream text (a commit title, a file name) carries are
// written as visible escapes, so a message is always one line and never drives the terminal.
// JSON lines carry the message as a JSON string (escaped by the encoder, invalid UTF-8 replaced).
// Thread safety: the logger may be used from any thread.

#include <memory>
#include <string>

#include "estimator/base/result.h"

namespace spdlog {
class logger;
}

namespace hubwatch::service {

enum class LogFormat { kText, kJournal, kJson };

// "text" becomes kJournal when $JOURNAL_STREAM is set; "json" stays json.
LogFormat ChooseLogFormat(const std::string& configured);

// level: trace, debug, info, warn, error.
Result<std::shared_ptr<spdlog::logger>> MakeLogger(LogFormat format, const std::string& level);

}  // namespace hubwatch::service
