#include "tracker/store/since.h"

#include "estimator/base/text.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::store {
namespace {

bool IsHex(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

Result<std::string> ResolveRevision(Store& store, const std::string& repo,
                                    const std::string& text) {
  if (repo.empty()) return Error::InvalidInput("revision " + Clip(text) + " needs a repo");
  Result<std::optional<std::string>> head = store.repos().GetRefHead(repo, text);
  if (!head.ok()) return head.error();
  if (*head) return **head;
  if (text.size() < 7 || text.size() > 40 || !IsHex(text)) {
    return Error::InvalidInput("'" + Clip(text) + "' is not a tracked ref of " + Clip(repo) +
                               " nor 7-40 lower-case hex digits of a revision");
  }
  Result<std::vector<std::string>> found = store.queries().FindRevisionShas(repo, text, 2);
  if (!found.ok()) return found.error();
  if (found->empty()) return Error::InvalidInput(Clip(repo) + " has no revision " + text);
  if (found->size() > 1) return Error::InvalidInput(text + " is ambiguous: give more digits");
  return found->front();
}

std::optional<int64_t> ParseSinceTime(const std::string& text) {
  const bool date = text.size() == 10 && text[4] == '-' && text[7] == '-';
  return advisory::ParseTime(date ? text + "T00:00:00Z" : text);
}

Status ApplySince(Store& store, const std::string& repo, const std::string& text, Query& query) {
  const std::optional<int64_t> time = ParseSinceTime(text);
  const bool revision_like = text.size() >= 7 && text.size() <= 40 && IsHex(text);
  if (revision_like && !repo.empty()) {
    Result<std::vector<std::string>> found = store.queries().FindRevisionShas(repo, text, 2);
    if (!found.ok()) return found.error();
    if (found->size() > 1) {
      return Error::InvalidInput("since " + text + " is ambiguous: give more digits");
    }
    if (found->size() == 1) {
      query.after_revision = found->front();
      return Status::Ok();
    }
    if (!time) return Error::InvalidInput("since: " + Clip(repo) + " has no revision " + text);
  }
  if (!time) {
    return Error::InvalidInput(
        "since '" + Clip(text) + "' is " +
        (revision_like ? "a revision: it needs a repo"
                       : "neither a revision (7-40 hex digits) nor a time (RFC 3339, "
                         "YYYY-MM-DD or Unix seconds)"));
  }
  query.committed_since = *time;
  return Status::Ok();
}

}  // namespace hubwatch::store
