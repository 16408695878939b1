#pragma once

// ServerEvidence: what a running `hubwatch serve` knows of the repos and revisions audit asks
// about (`hubwatch audit --server URL`), through its HTTP API. The pinned revisions' advisories
// come from the osv.dev-compatible POST /v1/querybatch (a repo and a full sha per query, as
// osv.dev's package + version), each (repo, sha) asked once however many references pin it, in
// batches of at most the server's 1,000 queries; each advisory is read once
// (GET /v1/vulns/{id}) however many pins it affects. A pinned revision is resolved by GET
// .../revisions/{rev} (an unknown one is reported, not judged clean); floating references read
// GET /api/v1/advisories?repo&since; an untracked repo is looked for among the tracked repos'
// derivatives. The same answers as StoreEvidence over the server's store.
//
// Thread safety: as the ApiClient (one thread). Ownership: borrows `api`.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/api_client.h"
#include "daemon/audit/judgement.h"

namespace hubwatch::cli {

class ServerEvidence final : public audit::EvidenceSource {
 public:
  explicit ServerEvidence(ApiClient& api) : api_(api) {}

  Result<std::vector<audit::Evidence>> Gather(const std::vector<audit::EvidenceRequest>& requests,
                                              const std::string& since) override;

 private:
  struct RepoFacts {
    bool tracked = false;
    std::string newest;
  };
  struct Resolved {
    std::string sha;      // "" when the server has no such revision of the repo
    std::string problem;  // why, then
  };
  Result<RepoFacts> Facts(const std::string& repo);
  // Each asked once however many references pin it: a pin's sha, and a repo's advisories
  // since `since` (one `since` per Gather).
  Result<Resolved> Resolve(const std::string& repo, const std::string& revision);
  Result<const std::vector<audit::AuditAdvisory>*> Received(const std::string& repo,
                                                            const std::string& since);
  Result<audit::AuditAdvisory> Advisory(const std::string& id);
  // The derivative entry (GET .../derivatives) of `repo` among the tracked repos', or null.
  Result<const nlohmann::json*> DerivativeOf(const std::string& repo);
  // e.derivative for an untracked `repo`, when it is a tracked repo's derivative.
  Status ReadDerivative(const std::string& repo, audit::Evidence& e);

  ApiClient& api_;
  std::map<std::string, RepoFacts> facts_;
  std::map<std::string, audit::AuditAdvisory> advisories_;             // by id
  std::map<std::pair<std::string, std::string>, Resolved> resolved_;   // by repo and revision
  std::map<std::string, std::vector<audit::AuditAdvisory>> received_;  // by repo
  bool derivatives_read_ = false;
  std::map<std::string, std::pair<std::string, nlohmann::json>>
      derivatives_;  // id -> upstream, entry
};

}  // namespace hubwatch::cli
