#pragma once

// LinkPager: one paged listing read to its end, page after page, following Link rel="next"
// (RFC 8288). Each target is resolved against the URL that produced its page (RFC 3986), so
// absolute and relative links both work; a link that does not resolve, points back at its own
// page, or a 100,000th page ends the listing with a protocol error, and so does a page whose
// body was cut at the request's max_body_bytes: it is never read, so the work per page stays
// bounded by that limit. What a page means is the caller's: `on_page` reads it and says whether
// to read on.
//
// Lifetime: owned by shared_ptr; the exchange in flight holds a reference until `on_done` ran.
// Thread safety: the client's loop thread only. REQUIRES: runner outlives the listing.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tracker/hub/accounting.h"
#include "tracker/hub/exchange.h"
#include "tracker/hub/hub_error.h"

namespace hubwatch::hub {

class LinkPager : public std::enable_shared_from_this<LinkPager> {
 public:
  // Reads one page; true to read the next one (when there is a link). Setting the error ends
  // the listing with it.
  using OnPage = std::function<bool(const ExchangeResponse&, std::optional<HubError>*)>;
  // Runs once: the listing's error, if any, and the stats of all its pages.
  using OnDone = std::function<void(std::optional<HubError>, const CallStats&)>;

  // Reads `first_url`, then the pages it links to, each with `request`'s settings.
  static void Start(ExchangeRunner& runner, ExchangeRequest request, std::string first_url,
                    OnPage on_page, OnDone on_done);

 private:
  LinkPager(ExchangeRunner& runner, ExchangeRequest request, OnPage on_page, OnDone on_done)
      : runner_(runner),
        base_request_(std::move(request)),
        on_page_(std::move(on_page)),
        on_done_(std::move(on_done)) {}

  void Fetch(std::string url);
  void OnResult(HubResult<ExchangeResponse> page);

  ExchangeRunner& runner_;
  ExchangeRequest base_request_;
  CallStats stats_;
  OnPage on_page_;
  OnDone on_done_;
  int pages_ = 0;
};

}  // namespace hubwatch::hub
