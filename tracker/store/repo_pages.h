#pragma once

// RepoPages: the tracked repos a page at a time, for the index, its search and
// GET /api/v1/repos - by family (repos.family) with their counts, and found by name, owner,
// family, state and "changed since" (repos.last_change_at), always in id order from a keyset
// cursor (the last id shown), never an offset: no repo is seen twice, and a repo added between
// two pages is shown when its id sorts after the cursor. Every query reads an index of repos
// (schema/migrations/0012_paged_lists.sql); the name substring walks the id index from the
// cursor (an index read, stopping at the page's end). It returns the keys; callers read the
// repos through RepoStore::GetRepo, so the table keeps one row reader.
//
// Thread safety: as its Database (one thread at a time). Ownership: borrows the Database, which
// must outlive it.

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "tracker/store/database.h"

namespace hubwatch::store {

struct FamilyCount {
  std::string family;
  int64_t repos = 0;
};

// Which repos, and where the page starts. Empty / 0 means "any".
struct RepoSearch {
  std::string name;           // a substring of the id, ASCII case-insensitive
  std::string owner;          // the namespace, exactly ("google")
  std::string family;         // exactly, as repos.family
  std::string state;          // a RepoStateName
  int64_t changed_since = 0;  // a change committed at or after (Unix seconds)
  std::string after;          // ids after this one, ascending (the next page)...
  std::string before;         // ...or, when set, the ids before this one (the previous page)
  int64_t limit = 100;        // REQUIRES: 1 or more
};

// A repo as the lists need it beside its RepoRecord.
struct RepoKey {
  std::string id;
  std::string family;
  int64_t last_change_at = 0;  // 0: no change yet
};

class RepoPages {
 public:
  explicit RepoPages(Database& db) : db_(db) {}

  // The families, by name, after `after`, at most `limit`, each with its count (from
  // repo_families, which triggers on repos keep: one row a family, never a count of repos).
  Result<std::vector<FamilyCount>> Families(const std::string& after, int64_t limit);
  // How many repos are tracked (the sum of the family counts).
  Result<int64_t> Count();
  // At most `limit` repos matching `search`, in ascending id order (also for `before`).
  Result<std::vector<RepoKey>> Find(const RepoSearch& search);

 private:
  Database& db_;
};

}  // namespace hubwatch::store
