#include "tracker/hub/link_pager.h"

#include "tracker/hub/link_header.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {

void LinkPager::Start(ExchangeRunner& runner, ExchangeRequest request, std::string first_url,
                      OnPage on_page, OnDone on_done) {
  std::shared_ptr<LinkPager> pager(
      new LinkPager(runner, std::move(request), std::move(on_page), std::move(on_done)));
  pager->Fetch(std::move(first_url));
}

void LinkPager::Fetch(std::string url) {
  ExchangeRequest request = base_request_;
  request.url = std::move(url);
  auto self = shared_from_this();
  runner_.Run(std::move(request), &stats_,
              [self](HubResult<ExchangeResponse> page) { self->OnResult(std::move(page)); });
}

void LinkPager::OnResult(HubResult<ExchangeResponse> page) {
  if (!page.ok()) return on_done_(page.error(), stats_);
  if (page->response.body_limit_hit) {
    return on_done_(ProtocolError("the body is over the limit of " +
                                      std::to_string(base_request_.max_body_bytes) + " bytes",
                                  page->final_url, page->response.status),
                    stats_);
  }
  ++pages_;
  std::optional<HubError> error;
  const bool more = on_page_(*page, &error);
  if (error) return on_done_(std::move(error), stats_);
  auto link = page->response.headers.Get("Link");
  std::optional<std::string> target = link ? FindLinkTarget(*link, "next") : std::nullopt;
  if (!more || !target) return on_done_(std::nullopt, stats_);
  std::optional<std::string> next = ResolveReference(page->final_url, *target);
  if (!next || *next == page->final_url || pages_ >= 100'000) {
    return on_done_(ProtocolError("unusable or looping Link rel=\"next\": " + *target,
                                  page->final_url, page->response.status),
                    stats_);
  }
  Fetch(std::move(*next));
}

}  // namespace hubwatch::hub
