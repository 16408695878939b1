#pragma once

// The page fixture database, built once per test binary (or $HUBWATCH_PAGE_FIXTURE_DB when it
// names an existing file), and the documents of its repos built straight from the store.

#include <memory>
#include <string>

#include "daemon/page/model_page.h"
#include "daemon/page/page_data.h"
#include "tracker/store/store.h"

namespace hubwatch::page::testing {

const std::string& PageDb();

// The model page of `repo` at its newest revision (or `sha`), as the route builds it.
struct BuiltPage {
  store::RepoRecord repo;
  std::vector<RevisionHistory> history;
  RevisionEstimate estimate;
  std::string sha;
  Document doc;
};
BuiltPage BuildPage(store::Store& store, const std::string& repo, const std::string& sha = "");

}  // namespace hubwatch::page::testing
