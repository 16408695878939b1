#pragma once

// The change log (GET /changes: every tracked change, newest commit first, filtered, a page at a
// time from a keyset cursor). The index is index_page.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/page/document.h"
#include "tracker/store/change_pages.h"
#include "tracker/store/records.h"

namespace hubwatch::page {

// One page of GET /changes: the filters it was asked with, the changes, and the cursor of the
// next page.
struct ChangesPage {
  store::ChangeSearch filter;
  std::string since;  // as asked (a revision or a time), "" for none
  std::vector<store::ChangeRecord> changes;
  std::string next_before;  // the next page's cursor (ChangeCursorText); "" on the last page
};

// A cursor as the pages write it: "COMMITTED_AT.ID" (the last row's sort key).
std::string ChangeCursorText(const store::ChangeCursor& cursor);
// The cursor of `text`: "COMMITTED_AT.ID", both decimal and ID at least 1; nullopt otherwise.
std::optional<store::ChangeCursor> ParseChangeCursor(const std::string& text);
Document BuildChangesPage(const ChangesPage& page);

}  // namespace hubwatch::page
