// The commands that read the store: history, changes, advisories, show.

#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "daemon/api_client.h"
#include "daemon/cli_common.h"
#include "daemon/cli_remote.h"
#include "daemon/commands.h"
#include "tracker/advisory/osv_export.h"
#include "estimator/base/text.h"
#include "tracker/diff/terminal_text.h"
#include "tracker/store/since.h"

namespace hubwatch::cli {
namespace {

using diff::EscapeForTerminal;

// JSON for stdout: invalid UTF-8 in a stored string is replaced, never an exception.
std::string Dump(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json RevisionJson(const store::RevisionRecord& r) {
  return {
      {"sha", r.sha},     {"parents", r.parents},          {"date", r.authored_at},
      {"title", r.title}, {"message", r.message},          {"authors", r.authors},
      {"refs", r.refs},   {"first_seen", r.first_seen_at}, {"rewritten_away", r.rewritten_away}};
}

nlohmann::json ChangeJson(const store::ChangeRecord& c) {
  return {{"id", c.id},
          {"repo", c.repo},
          {"revision", c.sha},
          {"kind", diff::KindName(c.change.kind)},
          {"impact", diff::ImpactName(c.change.impact)},
          {"path", c.change.path},
          {"summary", c.change.summary},
          {"details", c.change.details},
          {"committed_at", c.committed_at},
          {"recorded", c.created_at}};
}

// "behavioral  config (config.json): eos_token_id 1 -> 2", escaped for the terminal.
std::string ChangeText(const store::ChangeRecord& c) {
  return EscapeForTerminal(std::string(diff::ImpactName(c.change.impact)) + "  " +
                           std::string(diff::KindName(c.change.kind)) +
                           (c.change.path.empty() ? "" : " (" + c.change.path + ")") + ": " +
                           c.change.summary);
}

// A running daemon's API instead of its store (ApiClient).
constexpr char kApi[] = "--api";

std::string ShortSha(const std::string& sha) { return EscapeForTerminal(sha.substr(0, 7)); }

// The revisions of `repo`, newest first, with their changes, from the store. An untracked repo
// is Unsupported (exit 1): an answer, not bad input.
Result<std::vector<RevisionWithChanges>> StoredHistory(store::Store& store,
                                                       const std::string& repo) {
  Result<std::optional<store::RepoRecord>> tracked = store.repos().GetRepo(repo);
  if (!tracked.ok()) return tracked.error();
  if (!tracked->has_value()) {
    return Error::Unsupported(Clip(repo) +
                              " is not tracked: add it to the configuration's repos, or "
                              "POST /api/v1/repos {\"id\": \"...\"} to a running daemon");
  }
  Result<std::vector<store::RevisionRecord>> revs = store.revisions().ListRevisions(repo);
  if (!revs.ok()) return revs.error();
  std::vector<RevisionWithChanges> out;
  for (store::RevisionRecord& r : *revs) {
    Result<std::vector<store::ChangeRecord>> changes = store.revisions().ChangesOf(r.repo, r.sha);
    if (!changes.ok()) return changes.error();
    out.push_back({std::move(r), std::move(changes).value()});
  }
  return out;
}

int History(const Args& args, std::ostream& out, std::ostream& err) {
  CommonFlags flags;
  std::vector<std::string> positional;
  if (Status s = ParseCommon(args, flags, positional, {kApi}); !s.ok()) {
    return Fail(err, "history", s);
  }
  if (flags.help) {
    out << "usage: hubwatch history REPO (--config FILE | --api URL) [--json]\n\n"
           "The revisions hubwatch has ingested for REPO, newest first, with their changes.\n"
           "--api URL asks a running `hubwatch serve` (http://127.0.0.1:8437) instead of\n"
           "opening its store. Exit 1: REPO is not tracked.\n";
    return 0;
  }
  if (positional.size() != 1) return Fail(err, "history", Error::InvalidInput("needs one REPO"));
  Result<std::vector<RevisionWithChanges>> revs = Error::InvalidInput("");
  if (flags.values.count(kApi)) {
    Result<std::unique_ptr<ApiClient>> api = ApiClient::Open(flags.values[kApi]);
    if (!api.ok()) return Fail(err, "history", api.error());
    revs = RemoteHistory(**api, positional[0]);
  } else {
    Result<Opened> opened = OpenStoreFromConfig(flags);
    if (!opened.ok()) return Fail(err, "history", opened.error());
    revs = StoredHistory(*opened->store, positional[0]);
  }
  if (!revs.ok()) return Fail(err, "history", revs.error());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [r, changes] : *revs) {
    if (flags.json) {
      nlohmann::json j = RevisionJson(r);
      j["changes"] = nlohmann::json::array();
      for (const auto& c : changes) j["changes"].push_back(ChangeJson(c));
      list.push_back(std::move(j));
      continue;
    }
    out << ShortSha(r.sha) << "  " << EscapeForTerminal(r.authored_at.substr(0, 10)) << "  "
        << EscapeForTerminal(r.title) << (r.rewritten_away ? "  [rewritten away]" : "") << "\n";
    for (const auto& c : changes) out << "           " << ChangeText(c) << "\n";
  }
  if (flags.json) out << Dump(list) << "\n";
  if (!flags.json && revs->empty()) {
    out << EscapeForTerminal(positional[0]) << " is tracked; no revision is recorded yet\n";
  }
  return 0;
}

int Changes(const Args& args, std::ostream& out, std::ostream& err) {
  CommonFlags flags;
  std::vector<std::string> positional;
  if (Status s = ParseCommon(args, flags, positional, {"--since", "--kind", kApi}); !s.ok()) {
    return Fail(err, "changes", s);
  }
  if (flags.help) {
    out << "usage: hubwatch changes [REPO] (--config FILE | --api URL) [--since REV|TIME]\n"
           "                        [--kind KIND] [--json]\n\n"
           "Changes recorded, oldest first, with their commit dates. --api URL asks a running\n"
           "`hubwatch serve` (http://127.0.0.1:8437) instead of opening its store (REPO needed).\n"
           "--since REV   the changes after that revision of REPO (7-40 hex digits)\n"
           "--since TIME  the changes committed at or after TIME: RFC 3339, a date (2024-05-01)\n"
           "              or Unix seconds (the Hub's commit time, as the API's ?since=)\n"
           "KIND: config, generation_config, tokenizer, chat_template, special_tokens, weights,\n"
           "files, processor, estimate, history, error.\n";
    return 0;
  }
  store::Query q;
  if (positional.size() > 1) return Fail(err, "changes", Error::InvalidInput("at most one REPO"));
  if (!positional.empty()) q.repo = positional[0];
  if (flags.values.count("--kind")) {
    diff::ChangeKind kind;
    if (!diff::ParseKind(flags.values["--kind"], kind)) {
      return Fail(err, "changes", Error::InvalidInput("unknown --kind " + Clip(flags.values["--kind"])));
    }
    q.kind = flags.values["--kind"];
  }
  Result<std::vector<store::ChangeRecord>> changes = Error::InvalidInput("");
  if (flags.values.count(kApi)) {
    if (q.repo.empty()) return Fail(err, "changes", Error::InvalidInput("--api needs a REPO"));
    Result<std::unique_ptr<ApiClient>> api = ApiClient::Open(flags.values[kApi]);
    if (!api.ok()) return Fail(err, "changes", api.error());
    const std::string since = flags.values.count("--since") ? flags.values["--since"] : "";
    changes = RemoteChanges(**api, q.repo, since, q.kind);
  } else {
    Result<Opened> opened = OpenStoreFromConfig(flags);
    if (!opened.ok()) return Fail(err, "changes", opened.error());
    if (flags.values.count("--since")) {
      if (Status s = store::ApplySince(*opened->store, q.repo, flags.values["--since"], q);
          !s.ok()) {
        return Fail(err, "changes", s);
      }
    }
    changes = opened->store->revisions().ListChanges(q);
  }
  if (!changes.ok()) return Fail(err, "changes", changes.error());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : *changes) {
    if (flags.json) {
      list.push_back(ChangeJson(c));
    } else {
      out << (q.repo.empty() ? EscapeForTerminal(c.repo) + "  " : "") << ShortSha(c.sha) << "  "
          << EscapeForTerminal(c.committed_at.empty() ? "(no date) " : c.committed_at.substr(0, 10))
          << "  " << ChangeText(c) << "\n";
    }
  }
  if (flags.json) out << Dump(list) << "\n";
  return 0;
}

// The advisory's summary, or "" when the stored record has none (or not as a string).
std::string OsvSummary(const nlohmann::json& osv) {
  const auto it = osv.is_object() ? osv.find("summary") : osv.end();
  return it != osv.end() && it->is_string() ? it->get<std::string>() : std::string();
}

constexpr const char kFollowDirSymlink[] = "--follow-dir-symlink";

int Advisories(const Args& all_args, std::ostream& out, std::ostream& err) {
  CommonFlags flags;
  std::vector<std::string> positional;
  Args args;
  bool follow_dir_symlink = false;
  for (const std::string& a : all_args) {
    if (a == kFollowDirSymlink) {
      follow_dir_symlink = true;
    } else {
      args.push_back(a);
    }
  }
  if (Status s = ParseCommon(args, flags, positional,
                             {"--export", "--since", "--kind", "--affects", kApi});
      !s.ok()) {
    return Fail(err, "advisories", s);
  }
  if (flags.help) {
    out << "usage: hubwatch advisories [REPO] (--config FILE | --api URL) [--json]\n"
           "                           [--since REV|TIME]\n"
           "                           [--kind KIND] [--affects REV]\n"
           "                           [--export DIR [--follow-dir-symlink]]\n\n"
           "OSV advisories, in publication order.\n"
           "--since REV|TIME  as `hubwatch changes --since`: after that revision of REPO, or\n"
           "                  committed at or after that time\n"
           "--affects REV     the advisories that affect revision REV of REPO (your pin): the\n"
           "                  changes made after it to a state it has (osv.dev's \"affected\")\n"
           "--api URL         ask a running `hubwatch serve` (http://127.0.0.1:8437) instead of\n"
           "                  opening its store\n"
           "--export writes DIR/<id>.json for each and\n"
           "DIR/all.json listing {id, modified}, the layout of an OSV database export. Each file\n"
           "is written to a temporary file in DIR and renamed over the old one: a symbolic link\n"
           "at DIR/<name> is replaced, never followed. A symbolic link anywhere in DIR's path\n"
           "(DIR itself, link/sub, link/., a/link/../b) is refused, naming it, unless\n"
           "--follow-dir-symlink is given.\n";
    return 0;
  }
  if (follow_dir_symlink && !flags.values.count("--export")) {
    return Fail(err, "advisories",
                Error::InvalidInput(std::string(kFollowDirSymlink) + " needs --export DIR"));
  }
  store::Query q;
  if (positional.size() > 1) {
    return Fail(err, "advisories", Error::InvalidInput("at most one REPO"));
  }
  if (!positional.empty()) q.repo = positional[0];
  if (flags.values.count("--kind")) {
    diff::ChangeKind kind;
    if (!diff::ParseKind(flags.values["--kind"], kind)) {
      return Fail(err, "advisories",
                  Error::InvalidInput("unknown --kind " + Clip(flags.values["--kind"])));
    }
    q.kind = flags.values["--kind"];
  }
  const auto value = [&](const char* flag) {
    return flags.values.count(flag) ? flags.values[flag] : std::string();
  };
  Result<std::vector<store::AdvisoryRecord>> list = Error::InvalidInput("");
  if (flags.values.count(kApi)) {
    Result<std::unique_ptr<ApiClient>> api = ApiClient::Open(value(kApi));
    if (!api.ok()) return Fail(err, "advisories", api.error());
    list = RemoteAdvisories(**api, {q.repo, q.kind, value("--since"), value("--affects")});
  } else {
    Result<Opened> opened = OpenStoreFromConfig(flags);
    if (!opened.ok()) return Fail(err, "advisories", opened.error());
    if (flags.values.count("--since")) {
      if (Status s = store::ApplySince(*opened->store, q.repo, value("--since"), q); !s.ok()) {
        return Fail(err, "advisories", s);
      }
    }
    if (flags.values.count("--affects")) {
      Result<std::string> pin = store::ResolveRevision(*opened->store, q.repo, value("--affects"));
      if (!pin.ok()) return Fail(err, "advisories", pin.error());
      q.affects = *pin;
    }
    list = opened->store->advisories().ListAdvisories(q);
  }
  if (!list.ok()) return Fail(err, "advisories", list.error());
  if (flags.values.count("--export")) {
    const std::string& dir = flags.values["--export"];
    std::vector<advisory::ExportedAdvisory> files;
    files.reserve(list->size());
    for (const auto& a : *list) files.push_back({a.id, a.modified, &a.osv});
    if (Status s = advisory::ExportOsvDatabase(dir, files, follow_dir_symlink); !s.ok()) {
      return Fail(err, "advisories", s);
    }
    out << "exported " << list->size() << " advisories to " << EscapeForTerminal(dir) << "\n";
    return 0;
  }
  if (flags.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& a : *list) arr.push_back(a.osv);
    out << Dump(arr) << "\n";
    return 0;
  }
  for (const auto& a : *list) {
    out << EscapeForTerminal(a.id + "  " + a.published + "  " + OsvSummary(a.osv)) << "\n";
  }
  return 0;
}

int Show(const Args& args, std::ostream& out, std::ostream& err) {
  CommonFlags flags;
  std::vector<std::string> positional;
  if (Status s = ParseCommon(args, flags, positional, {}); !s.ok()) return Fail(err, "show", s);
  if (flags.help) {
    out << "usage: hubwatch show REPO@REVISION --config FILE [--json]\n\n"
           "One revision: commit, files, every change with its details, the estimate, advisories.\n"
           "REVISION: a tracked ref (main, a tag) at its head as hubwatch last saw it, or a\n"
           "prefix of the sha. It reads the store (the files are not in the API); a running\n"
           "daemon answers GET /api/v1/repos/REPO/revisions/SHA with the revision and changes.\n";
    return 0;
  }
  const size_t at = positional.size() == 1 ? positional[0].find('@') : std::string::npos;
  if (at == std::string::npos) {
    return Fail(err, "show", Error::InvalidInput("needs REPO@REVISION"));
  }
  const std::string repo = positional[0].substr(0, at);
  std::string prefix = positional[0].substr(at + 1);
  Result<Opened> opened = OpenStoreFromConfig(flags);
  if (!opened.ok()) return Fail(err, "show", opened.error());
  store::Store& store = *opened->store;
  // A ref hubwatch tracks names its head; anything else is a sha prefix.
  if (Result<std::optional<std::string>> head = store.repos().GetRefHead(repo, prefix);
      head.ok() && head->has_value()) {
    prefix = **head;
  }
  Result<std::vector<store::RevisionRecord>> revs = store.revisions().ListRevisions(repo);
  if (!revs.ok()) return Fail(err, "show", revs.error());
  const store::RevisionRecord* rev = nullptr;
  for (const auto& r : *revs) {
    if (!prefix.empty() && r.sha.rfind(prefix, 0) == 0) {
      if (rev) {
        return Fail(err, "show",
                    Error::InvalidInput(Clip(prefix) + " is ambiguous in " + Clip(repo)));
      }
      rev = &r;
    }
  }
  if (!rev) {
    return Fail(err, "show",
                Error::InvalidInput("no revision " + Clip(prefix) + " of " + Clip(repo)));
  }
  Result<std::vector<store::ChangeRecord>> changes = store.revisions().ChangesOf(repo, rev->sha);
  Result<std::optional<store::EstimateRecord>> estimate =
      store.revisions().GetEstimate(repo, rev->sha);
  Result<diff::Manifest> manifest = store.revisions().GetManifest(repo, rev->sha);
  Result<std::vector<store::AdvisoryRecord>> advisories =
      store.advisories().ListAdvisories({.repo = repo});
  for (const Status& s : {Status(changes.ok() ? Status() : changes.error()),
                          Status(estimate.ok() ? Status() : estimate.error()),
                          Status(manifest.ok() ? Status() : manifest.error()),
                          Status(advisories.ok() ? Status() : advisories.error())}) {
    if (!s.ok()) return Fail(err, "show", s);
  }
  nlohmann::json j = RevisionJson(*rev);
  j["repo"] = repo;
  j["changes"] = nlohmann::json::array();
  for (const auto& c : *changes) j["changes"].push_back(ChangeJson(c));
  j["files"] = nlohmann::json::array();
  for (const auto& f : *manifest) {
    j["files"].push_back({{"path", f.path},
                          {"oid", f.git_oid},
                          {"size", f.size},
                          {"lfs_sha256", f.lfs_sha256 ? nlohmann::json(*f.lfs_sha256) : nullptr}});
  }
  j["estimate"] = *estimate ? (*estimate)->estimate : nlohmann::json(nullptr);
  j["advisories"] = nlohmann::json::array();
  for (const auto& a : *advisories) {
    if (a.sha == rev->sha) j["advisories"].push_back(a.id);
  }
  if (flags.json) {
    out << Dump(j) << "\n";
    return 0;
  }
  out << EscapeForTerminal(repo + "@" + rev->sha) << "\n"
      << EscapeForTerminal(rev->authored_at + "  " + rev->title) << "\n";
  if (!rev->authors.empty()) out << "by " << EscapeForTerminal(rev->authors.front()) << "\n";
  out << manifest->size() << " files\n\nchanges:\n";
  for (const auto& c : *changes) {
    out << "  " << ChangeText(c) << "\n";
    const auto diff_text = c.change.details.find("unified_diff");
    if (diff_text != c.change.details.end() && diff_text->is_string()) {
      std::istringstream lines(diff_text->get<std::string>());
      for (std::string line; std::getline(lines, line);) {
        out << "      " << EscapeForTerminal(line) << "\n";
      }
    }
  }
  if (changes->empty()) out << "  none\n";
  if (*estimate) {
    out << "\nestimate: " << (*estimate)->params_total << " parameters";
    if ((*estimate)->parameter_delta) {
      out << ", delta against the headers " << *(*estimate)->parameter_delta;
    }
    out << "\n";
  }
  out << "\nadvisories:";
  for (const auto& id : j["advisories"]) out << " " << EscapeForTerminal(id.get<std::string>());
  out << (j["advisories"].empty() ? " none\n" : "\n");
  return 0;
}

}  // namespace

int RunHistory(const Args& a, std::ostream& o, std::ostream& e) { return History(a, o, e); }
int RunChanges(const Args& a, std::ostream& o, std::ostream& e) { return Changes(a, o, e); }
int RunAdvisories(const Args& a, std::ostream& o, std::ostream& e) { return Advisories(a, o, e); }
int RunShow(const Args& a, std::ostream& o, std::ostream& e) { return Show(a, o, e); }

}  // namespace hubwatch::cli
