#pragma once

// The HTML of the two forms a Document may hold (document.h): /plan's paste-a-config form (a
// POST, with the estimator's reason beside it after a failed one) and a list page's filters (a
// GET that reloads the page, so it works without JavaScript). Every control has a label tied to
// it by id; what a reader typed comes back escaped. A form whose action IsSafeHref refuses is
// left out. HTML only: the Markdown twin says where the form is. Thread-safe as the HtmlMarkup
// written to is.

#include "daemon/page/document.h"
#include "daemon/page/html_markup.h"

namespace hubwatch::page {

void AppendPlanForm(HtmlMarkup& html, const PlanForm& form);
void AppendFilterForm(HtmlMarkup& html, const FilterForm& form);

}  // namespace hubwatch::page
