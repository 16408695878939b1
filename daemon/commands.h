#pragma once

// The hubwatch subcommands. Each takes its arguments (after the subcommand name) and the streams
// to write to, and returns the process exit code: 0 success, 2 bad input or usage, 1 other
// failure. Commands never call exit(); main() owns the process.

#include <iosfwd>
#include <string>
#include <vector>

namespace hubwatch::cli {

using Args = std::vector<std::string>;

// hubwatch estimate CONFIG.json [options]: parameter counts, memory, fit and cost.
int RunEstimate(const Args& args, std::ostream& out, std::ostream& err);

// hubwatch calibrate --measurements FILE.jsonl --configs DIR: estimates against measured runs.
int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err);

// hubwatch chat-template render --template FILE --conversation FILE.json: the rendered prompt.
int RunChatTemplate(const Args& args, std::ostream& out, std::ostream& err);

// hubwatch serve --config FILE: the daemon.
int RunServe(const Args& args, std::ostream& out, std::ostream& err);
// hubwatch poll-once --config FILE: one full cycle over the configured repos.
int RunPollOnce(const Args& args, std::ostream& out, std::ostream& err);
// hubwatch history REPO --config FILE: ingested revisions and their changes.
int RunHistory(const Args& args, std::ostream& out, std::ostream& err);
// hubwatch changes [REPO] --config FILE [--since T] [--kind K]: recorded changes.
int RunChanges(const Args& args, std::ostream& out, std::ostream& err);
// hubwatch advisories [REPO] --config FILE [--export DIR]: OSV advisories.
int RunAdvisories(const Args& args, std::ostream& out, std::ostream& err);
// hubwatch show REPO@REVISION --config FILE: one revision in full.
int RunShow(const Args& args, std::ostream& out, std::ostream& err);
// hubwatch derivatives REPO --config FILE: a repo's derivatives and the fixes they lag.
int RunDerivatives(const Args& args, std::ostream& out, std::ostream& err);
// hubwatch audit [PATH...] --config FILE | --server URL: the models a codebase pins or floats,
// and the upstream changes that affect them.
int RunAudit(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace hubwatch::cli
