#pragma once

// Judgement: each model reference discovery found, against what hubwatch knows of its repo.
// A pinned revision is judged by the advisories whose range holds it (the upstream changes the
// pin has not taken); a floating reference, or one by branch or tag name, by the advisories it
// received since a time (--since); a repo hubwatch does not track, by its place among a tracked
// repo's derivatives when it is one (its lag on upstream's fixes), else as "not tracked".
// What hubwatch knows comes from an EvidenceSource: the local store (store_evidence.h) or a
// running server (the CLI's). Plain values; Judge is a pure function.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/audit/reference.h"
#include "estimator/base/result.h"
#include "tracker/diff/change.h"

namespace hubwatch::audit {

// One advisory as audit reports it. Text fields are upstream's: escape them to print.
struct AuditAdvisory {
  std::string id{};
  std::string kind{};  // "config", "chat_template", ...
  diff::Impact impact = diff::Impact::kCosmetic;
  std::string summary{};
  std::string fixed_in{};  // the revision whose change it reports
};

// A repo hubwatch does not track that is a derivative of one it does.
struct DerivativeLag {
  std::string upstream{};
  std::string relation{};                // "finetune", "quantized", ...
  std::string head{};                    // the derivative's revision its statuses were read at
  bool current = false;                  // its statuses cover upstream's newest fix
  std::vector<AuditAdvisory> lagging{};  // upstream advisories it has not taken
};

// What hubwatch knows of one reference's repo and revision.
struct Evidence {
  bool tracked = false;
  std::string newest{};   // the repo's newest revision; "" when none is stored yet
  std::string sha{};      // the full sha a pinned revision names; "" when floating or unknown
  std::string problem{};  // why a pinned revision names no stored revision; "" otherwise
  // Pinned: the advisories affecting `sha`. Floating or a ref name: those of revisions
  // committed at or after --since (none asked: empty).
  std::vector<AuditAdvisory> advisories{};
  std::optional<DerivativeLag> derivative{};  // set only for a repo that is not tracked
};

// The question for one reference: its repo and the revision as written.
struct EvidenceRequest {
  std::string repo{};
  std::string revision{};  // "" = floating
  RevisionKind kind = RevisionKind::kFloating;
};

// Answers the questions. Implementations say their thread safety.
class EvidenceSource {
 public:
  virtual ~EvidenceSource() = default;
  // One Evidence per request, in order. `since`: a time or a revision as `hubwatch changes
  // --since` takes it (tracker/store/since.h), for the floating and named references; "" asks
  // nothing of them. Errors: the source cannot be read (a store or transport failure).
  virtual Result<std::vector<Evidence>> Gather(const std::vector<EvidenceRequest>& requests,
                                               const std::string& since) = 0;
};

enum class Verdict {
  kAffected,         // pinned, and advisories affect the pinned revision
  kCurrent,          // pinned, and nothing affects it
  kReceived,         // floating or by name: advisories arrived since --since
  kFloating,         // floating or by name: nothing arrived (or nothing was asked)
  kUnknownRevision,  // pinned to a revision hubwatch has not stored
  kComputed,         // the revision is computed at run time: cannot be judged
  kLagging,          // an untracked derivative lagging on upstream fixes
  kNotTracked,       // hubwatch does not track the repo
};
std::string_view VerdictName(Verdict verdict);  // "affected", "current", ..., "not-tracked"

struct Finding {
  ModelReference reference{};
  Verdict verdict = Verdict::kNotTracked;
  Evidence evidence{};
  std::optional<diff::Impact> worst{};  // the most severe advisory it reports; none: clean
  // The revision that takes every fix ("" when none to suggest): the repo's newest, for a pin
  // that is behind it.
  std::string suggested_revision{};
  std::string message{};  // one line for people; upstream text in it is already made safe
};

// One finding per reference, in order. `since`: as given to EvidenceSource::Gather.
// REQUIRES: evidence.size() == references.size().
std::vector<Finding> Judge(const std::vector<ModelReference>& references,
                           const std::vector<Evidence>& evidence, const std::string& since);

// Whether any finding reports an advisory at or above `threshold` (the exit status's rule).
bool AnyAtOrAbove(const std::vector<Finding>& findings, diff::Impact threshold);

// The request for each reference.
std::vector<EvidenceRequest> RequestsFor(const std::vector<ModelReference>& references);

}  // namespace hubwatch::audit
