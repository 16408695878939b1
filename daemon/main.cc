// hubwatch: keeps watch over Hugging Face model repositories. This file only dispatches to the
// subcommands in commands.h.

#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/commands.h"
#include "daemon/service/signals.h"
#include "hubwatch/version.h"

namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const hubwatch::cli::Args&, std::ostream&, std::ostream&);
};

constexpr Command kCommands[] = {
    {"estimate", "parameter count, GPU memory, fit and cost of a model from its config.json",
     hubwatch::cli::RunEstimate},
    {"calibrate", "the memory estimates against published measured runs: error per run and source",
     hubwatch::cli::RunCalibrate},
    {"chat-template", "render a chat template on a conversation, as the Hub renders it",
     hubwatch::cli::RunChatTemplate},
    {"serve", "the daemon: poll on schedule, ingest, serve the HTTP API", hubwatch::cli::RunServe},
    {"poll-once", "poll every configured repo once: new revisions, changes, advisories",
     hubwatch::cli::RunPollOnce},
    {"history", "the revisions of a repo and their changes", hubwatch::cli::RunHistory},
    {"changes", "recorded changes, filtered by repo, time and kind", hubwatch::cli::RunChanges},
    {"advisories", "OSV advisories; --export writes an OSV database layout",
     hubwatch::cli::RunAdvisories},
    {"show", "one revision in full: files, changes with diffs, estimate, advisories",
     hubwatch::cli::RunShow},
    {"derivatives", "a repo's fine-tunes, adapters, quantizations: the upstream fixes they lag",
     hubwatch::cli::RunDerivatives},
    {"audit", "the models a codebase pins or floats, and the upstream changes affecting them",
     hubwatch::cli::RunAudit},
};

void PrintHelp(std::ostream& out) {
  out << "hubwatch " << hubwatch::kVersion
      << " - keeps watch over Hugging Face model repositories\n\n"
         "usage: hubwatch <command> [options]\n"
         "       hubwatch <command> --help\n\n"
         "commands:\n";
  for (const Command& c : kCommands) {
    out << "  " << c.name << std::string(16 - c.name.size(), ' ') << c.summary << "\n";
  }
  out << "\noptions:\n"
         "  --help          show this help\n"
         "  --version       print the version\n";
}

// `serve` blocks the signals it handles before anything else runs, so that a SIGHUP or SIGTERM
// in its first milliseconds waits for the service's handlers instead of killing it (other
// commands keep the default actions). A .preinit_array entry runs once the loader has mapped
// and relocated the libraries but before any of their initializers (gnutls, p11-kit and krb5
// take milliseconds) and before main(): the earliest point a program can act.
void BlockSignalsEarlyForServe(int argc, char** argv, char**) {
  if (argc > 1 && std::string_view(argv[1]) == "serve") hubwatch::service::BlockServiceSignals();
}
[[gnu::used, gnu::section(".preinit_array")]] void (*const kBlockSignalsEarly)(
    int, char**, char**) = BlockSignalsEarlyForServe;

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintHelp(std::cerr);
    return 2;
  }
  const std::string& first = args.front();
  if (first == "--help" || first == "-h" || first == "help") {
    PrintHelp(std::cout);
    return 0;
  }
  if (first == "--version") {
    std::cout << "hubwatch " << hubwatch::kVersion << "\n";
    return 0;
  }
  for (const Command& c : kCommands) {
    if (c.name == first) {
      args.erase(args.begin());
      return c.run(args, std::cout, std::cerr);
    }
  }
  std::cerr << "hubwatch: unknown command '" << first << "' (see hubwatch --help)\n";
  return 2;
}
