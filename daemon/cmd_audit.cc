// hubwatch audit [PATH...]: the models a codebase pins or floats, and the upstream changes that
// affect them (daemon/audit), as npm audit, pip-audit and osv-scanner do for packages.

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "daemon/api_client.h"
#include "daemon/audit/audit_report.h"
#include "daemon/audit/dir_fd.h"
#include "daemon/audit/fix.h"
#include "daemon/audit/replace_at.h"
#include "daemon/audit/sarif.h"
#include "daemon/audit/scan_tree.h"
#include "daemon/audit/store_evidence.h"
#include "daemon/audit_remote.h"
#include "daemon/cli_common.h"
#include "daemon/commands.h"
#include "estimator/base/clock.h"
#include "estimator/base/text.h"
#include "hubwatch/version.h"
#include "tracker/advisory/time_text.h"
#include "tracker/store/since.h"

namespace hubwatch::cli {
namespace {

constexpr char kHelp[] =
    "usage: hubwatch audit [PATH...] (--config FILE | --server URL) [options]\n"
    "\n"
    "Finds every Hugging Face model a codebase loads, downloads or serves - from_pretrained,\n"
    "pipeline, hf_hub_download, snapshot_download, sentence-transformers, diffusers and vLLM\n"
    "calls in Python; base_model / model_name_or_path / model keys in YAML, JSON and TOML;\n"
    "huggingface-cli / hf download, vllm serve and text-generation-launcher command lines in\n"
    "shell scripts, Dockerfiles and Makefiles; org/name@sha lines in pin files - with the\n"
    "revision it is pinned to, and says which upstream changes hubwatch recorded affect it:\n"
    "  affected           pinned to a revision that has not taken those changes\n"
    "  current            pinned, and nothing affects it\n"
    "  received           follows a branch and received changes since --since\n"
    "  floating           follows a branch (pin it to choose when it changes)\n"
    "  unknown-revision   pinned to a revision hubwatch has not stored\n"
    "  computed-revision  the revision is computed at run time\n"
    "  lagging-derivative an untracked derivative of a tracked repo, behind its upstream fixes\n"
    "  not-tracked        hubwatch does not track the repo (the message says how to)\n"
    "Ids computed at run time are listed as not read, never guessed. Files are never changed\n"
    "unless --fix is given.\n"
    "\n"
    "  PATH                 directories or files to scan (default: .); .gitignore is honoured,\n"
    "                       links are not followed, files over 1 MiB are noted and not read\n"
    "  --config FILE        judge against the store this configuration names\n"
    "  --server URL         judge against a running `hubwatch serve` (http://host:port; --api\n"
    "                       is the same), through its osv.dev-compatible /v1/querybatch\n"
    "  --since TIME         for floating references: the changes of revisions committed since\n"
    "                       TIME (RFC 3339, YYYY-MM-DD or Unix seconds)\n"
    "  --since-last FILE    as --since the time of the audit that last wrote FILE (none: the\n"
    "                       first audit asks nothing); this audit's time is then written to it\n"
    "  --fail-on IMPACT     exit 1 when a reference has an advisory at or above IMPACT:\n"
    "                       cosmetic, behavioral (default) or breaking\n"
    "  --json               the machine form\n"
    "  --sarif              SARIF 2.1.0, for code-scanning UIs (GitHub, GitLab, VS Code)\n"
    "  --fix                rewrite each affected pin's revision literal to the revision that\n"
    "                       takes every fix (only the literal; floating references are not\n"
    "                       rewritten)\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 nothing at or above --fail-on; 1 something is; 2 bad input, or nothing\n"
    "could be judged (the store or the server could not be read).\n";

struct Options {
  std::vector<std::string> roots;
  std::string since, since_last, server;
  diff::Impact fail_on = diff::Impact::kBehavioral;
  bool sarif = false, fix = false;
};

// Takes the flags ParseCommon does not know (booleans, and --api as --server) out of `args`.
Args TakeOwnFlags(const Args& args, Options& o) {
  Args rest;
  for (const std::string& a : args) {
    if (a == "--sarif") {
      o.sarif = true;
    } else if (a == "--fix") {
      o.fix = true;
    } else {
      rest.push_back(a == "--api" ? "--server" : a);
    }
  }
  return rest;
}

// The directory --since-last FILE is in (as the user named it), and FILE's name there.
struct SinceLastFile {
  audit::DirFd dir;
  std::string name;
};

Result<SinceLastFile> OpenSinceLast(const std::string& file) {
  const size_t slash = file.rfind('/');
  std::string name = slash == std::string::npos ? file : file.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    return Error::InvalidInput("--since-last " + Clip(file) + ": not a file name");
  }
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : file.substr(0, slash);
  Result<audit::DirFd> opened = audit::DirFd::Open(dir);
  if (!opened.ok()) {
    return Error::InvalidInput("--since-last " + Clip(file) + ": " + opened.error().message);
  }
  return SinceLastFile{std::move(opened).value(), std::move(name)};
}

// The time --since-last FILE holds ("" when FILE does not exist yet). FILE is read as the
// audit's own file: a symbolic link or anything but a regular file there is an error.
Result<std::string> LastAuditTime(const std::string& file) {
  constexpr size_t kMaxBytes = 4096;  // one time and a newline
  Result<SinceLastFile> at = OpenSinceLast(file);
  if (!at.ok()) return at.error();
  struct stat st {};
  if (::fstatat(at->dir.get(), at->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 &&
      errno == ENOENT) {
    return std::string();
  }
  Result<audit::RegularFile> read = audit::ReadRegularAt(at->dir, at->name, kMaxBytes);
  if (!read.ok()) {
    return Error::InvalidInput("--since-last " + Clip(file) + ": " + read.error().message);
  }
  const std::string line = read->content.substr(0, read->content.find('\n'));
  if (!store::ParseSinceTime(line)) {
    return Error::InvalidInput("--since-last " + Clip(file) + ": '" + Clip(line) +
                               "' is not the time an audit wrote");
  }
  return line;
}

// Replaces FILE atomically through a fresh temporary beside it (audit/replace_at.h): a link
// planted at any name in its directory is never followed.
Status RecordAuditTime(const std::string& file, int64_t now) {
  Result<SinceLastFile> at = OpenSinceLast(file);
  if (!at.ok()) return at.error();
  const std::string text = advisory::Rfc3339(now) + "\n";
  if (Status s = audit::ReplaceAt(at->dir, at->name, text, std::nullopt); !s.ok()) {
    return Error::Io("--since-last " + Clip(file) + ": " + s.error().message);
  }
  return Status::Ok();
}

// Evidence from the store or the server the flags name.
Result<std::vector<audit::Evidence>> Gather(const CommonFlags& flags, const Options& o,
                                            const std::vector<audit::EvidenceRequest>& requests,
                                            std::string* judged_by) {
  if (!o.server.empty()) {
    Result<std::unique_ptr<ApiClient>> api = ApiClient::Open(o.server);
    if (!api.ok()) return api.error();
    *judged_by = "server " + o.server;
    ServerEvidence source(**api);
    return source.Gather(requests, o.since);
  }
  Result<Opened> opened = OpenStoreFromConfig(flags);
  if (!opened.ok()) return opened.error();
  *judged_by = "store " + opened->config.store;
  audit::StoreEvidence source(*opened->store);
  return source.Gather(requests, o.since);
}

int Run(const Args& raw, std::ostream& out, std::ostream& err) {
  Options o;
  CommonFlags flags;
  std::vector<std::string> positional;
  if (Status s = ParseCommon(TakeOwnFlags(raw, o), flags, positional,
                             {"--server", "--since", "--since-last", "--fail-on"});
      !s.ok()) {
    return Fail(err, "audit", s);
  }
  if (flags.help) {
    out << kHelp;
    return 0;
  }
  o.roots = positional.empty() ? std::vector<std::string>{"."} : positional;
  o.server = flags.values["--server"];
  o.since = flags.values["--since"];
  o.since_last = flags.values["--since-last"];
  if (const std::string& level = flags.values["--fail-on"]; !level.empty()) {
    std::optional<diff::Impact> impact = diff::ParseImpact(level);
    if (!impact) {
      return Fail(err, "audit",
                  Error::InvalidInput("--fail-on takes cosmetic, behavioral or breaking"));
    }
    o.fail_on = *impact;
  }
  if (o.server.empty() == flags.config.empty()) {
    return Fail(err, "audit",
                Error::InvalidInput("judges against one of --config FILE (the store) or "
                                    "--server URL (a running hubwatch serve)"));
  }
  if (flags.json && o.sarif) {
    return Fail(err, "audit", Error::InvalidInput("--json and --sarif exclude each other"));
  }
  if (!o.since.empty() && !o.since_last.empty()) {
    return Fail(err, "audit", Error::InvalidInput("--since and --since-last exclude each other"));
  }
  if (!o.since.empty() && !store::ParseSinceTime(o.since)) {
    return Fail(err, "audit",
                Error::InvalidInput("--since must be a time (RFC 3339, YYYY-MM-DD or Unix "
                                    "seconds)"));
  }
  const int64_t started = SystemClock().UnixSeconds();
  if (!o.since_last.empty()) {
    Result<std::string> last = LastAuditTime(o.since_last);
    if (!last.ok()) return Fail(err, "audit", last.error());
    o.since = *last;
  }

  Result<audit::ScanReport> scan = audit::ScanTree(o.roots, audit::ScanOptions());
  if (!scan.ok()) return Fail(err, "audit", Error::InvalidInput(scan.error().message));
  audit::AuditResult result{.scan = std::move(scan).value(), .since = o.since};
  Result<std::vector<audit::Evidence>> evidence =
      Gather(flags, o, audit::RequestsFor(result.scan.references), &result.judged_by);
  if (!evidence.ok()) {
    err << "hubwatch audit: " << EscapeControls(evidence.error().message) << "\n";
    return 2;
  }
  result.findings = audit::Judge(result.scan.references, *evidence, o.since);

  if (flags.json) {
    out << audit::RenderJson(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else if (o.sarif) {
    out << audit::RenderSarif(result, kVersion)
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << audit::RenderText(result);
  }
  if (o.fix) {
    for (const audit::FileFix& f : audit::ApplyFixes(o.roots, result.findings)) {
      const std::string name = EscapeControls(audit::PrintableFileName(f.file));
      if (f.error.empty()) {
        err << "hubwatch audit: fixed " << name << " (" << f.replaced << " revision literal"
            << (f.replaced == 1 ? "" : "s") << ")\n";
      } else {
        err << "hubwatch audit: not fixed " << name << ": " << EscapeControls(f.error) << "\n";
      }
    }
  }
  if (!o.since_last.empty()) {
    if (Status s = RecordAuditTime(o.since_last, started); !s.ok()) return Fail(err, "audit", s);
  }
  return audit::AnyAtOrAbove(result.findings, o.fail_on) ? 1 : 0;
}

}  // namespace

int RunAudit(const Args& args, std::ostream& out, std::ostream& err) { return Run(args, out, err); }

}  // namespace hubwatch::cli
