#include "tracker/pipeline/revision_commit.h"

#include <map>
#include <utility>

#include "tracker/diff/tracked_files.h"
#include "tracker/pipeline/advisory_step.h"
#include "tracker/pipeline/estimate_step.h"
#include "tracker/pipeline/revision_diff.h"

namespace hubwatch::pipeline {
namespace {

// "  behavioral config (config.json): eos_token_id 1 -> 2 -> HWA-...": one change for the log.
std::string ChangeLine(const diff::Change& c, const std::string* advisory_id) {
  return "  " + std::string(diff::ImpactName(c.impact)) + " " +
         std::string(diff::KindName(c.kind)) + (c.path.empty() ? "" : " (" + c.path + ")") + ": " +
         c.summary + (advisory_id ? " -> " + *advisory_id : "");
}

}  // namespace

bool HoldsModelFiles(const Snapshot* snapshot) {
  if (!snapshot) return false;
  for (const diff::ManifestEntry& e : snapshot->manifest) {
    if (diff::RoleOfPath(e.path) != diff::FileRole::kNone) return true;
  }
  return false;
}

diff::Change HistoryChange(const std::string& ref, const std::string& new_head,
                           const Rewrite& rewrite) {
  diff::Change history;
  history.kind = diff::ChangeKind::kHistory;
  history.impact = diff::Impact::kBreaking;
  history.summary = ref + " rewritten: previous head " + rewrite.previous_head.substr(0, 7) +
                    " is gone; " + std::to_string(rewrite.rewritten_away.size()) +
                    " revision(s) no longer reachable, the new history has " +
                    std::to_string(rewrite.new_history_length) + " commit(s)";
  history.details = {{"ref", ref},
                     {"previous_head", rewrite.previous_head},
                     {"new_head", new_head},
                     {"rewritten_away", rewrite.rewritten_away},
                     {"new_history_length", rewrite.new_history_length}};
  return history;
}

CommittedRevision CommitRevision(store::Store& store, const RevisionToCommit& r, int64_t now,
                                 const PollerOptions& options) {
  const hub::CommitInfo& commit = *r.commit;
  const Snapshot& current = *r.current;
  store::RevisionIngest in;
  in.revision.repo = r.repo;
  in.revision.sha = commit.id;
  if (r.base) in.revision.parents = {r.base->sha};
  in.revision.authored_at = commit.date;
  in.revision.title = commit.title;
  in.revision.message = commit.message;
  in.revision.authors = commit.authors;
  in.revision.refs = {r.ref};
  in.revision.first_seen_at = now;
  in.manifest = current.manifest;
  for (auto& [oid, content] : r.fresh->blobs) in.blobs.emplace_back(oid, content);
  for (auto& [id, header] : r.fresh->headers) in.headers.emplace_back(id, header);

  if (r.rewrite) {
    in.changes.push_back(HistoryChange(r.ref, commit.id, *r.rewrite));
    in.rewritten_away = r.rewrite->rewritten_away;
  }
  // The initial upload has no state before it: its files are not changes.
  if (HoldsModelFiles(r.base)) {
    for (diff::Change& c : DiffSnapshots(r.base, current)) in.changes.push_back(std::move(c));
  }

  Result<std::optional<store::EstimateRecord>> previous = store.revisions().LatestEstimate(r.repo);
  if (!previous.ok()) return {previous.error().message};
  if (NeedsEstimate(r.base, current, previous->has_value())) {
    EstimateOutcome e = EstimateSnapshot(r.repo, current);
    if (e.record) {
      if (*previous) {
        if (std::optional<diff::Change> c =
                EstimateChange((*previous)->estimate, e.record->estimate)) {
          in.changes.push_back(std::move(*c));
        }
      }
      in.estimate = std::move(e.record);
    }
    if (!e.skipped_because.empty() && current.File("config.json") && options.log) {
      // recorded unavailable
      options.log("no estimate for " + r.repo + "@" + commit.id.substr(0, 7) + ": " +
                  e.skipped_because);
    }
  }

  Status advised = AdviseRevision(in, options, r.tracked_since, [&](const diff::Change& c) {
    return store.revisions().LastChangeRevision(r.repo, diff::KindName(c.kind), c.path);
  });
  if (!advised.ok()) return {advised.error().message};
  in.ref_heads = {{r.ref, commit.id}};

  if (options.before_commit) options.before_commit(r.repo, commit.id);
  Result<store::IngestOutcome> outcome = store.revisions().Ingest(in);
  if (!outcome.ok()) return {outcome.error().message};
  CommittedRevision done;
  done.ingested = *outcome == store::IngestOutcome::kIngested;
  done.changes = static_cast<int>(in.changes.size());
  done.advisories = static_cast<int>(in.advisories.size());
  done.held = in.settle_at.has_value();
  done.lines.push_back(r.repo + "@" + commit.id.substr(0, 7) + " \"" + commit.title +
                       "\": " + std::to_string(done.changes) + " change(s), " +
                       std::to_string(done.advisories) + " advisory(ies)" +
                       (done.held && done.advisories > 0 ? " held while the burst settles" : ""));
  std::map<int, std::string> advised_ids;
  for (const store::NewAdvisory& a : in.advisories) advised_ids[a.change_ordinal] = a.id;
  for (size_t i = 0; i < in.changes.size(); ++i) {
    auto id = advised_ids.find(static_cast<int>(i));
    done.lines.push_back(
        ChangeLine(in.changes[i], id != advised_ids.end() ? &id->second : nullptr));
  }
  return done;
}

}  // namespace hubwatch::pipeline
