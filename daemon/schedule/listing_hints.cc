#include "daemon/schedule/listing_hints.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <utility>

#include "daemon/service/metrics.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::schedule {

struct ListingHints::Round {
  ListingRound plan;
  std::deque<std::pair<std::string, bool>> queue;  // (source, probe) still to read
  int reading = 0;
  int64_t requests = 0;
  int hints = 0;
  bool probing = false;              // reading the feed's first page before the plan
  std::optional<std::string> error;  // the first failure: the round is incomplete
  SteadyTime started{};
};

ListingHints::ListingHints(Deps deps, Options options, std::optional<int64_t> watermark)
    : deps_(std::move(deps)),
      options_(options),
      ledger_(ListingLedger::Options{.page_size = options.page_size}) {
  if (watermark) ledger_.RestoreWatermark(*watermark);
}

ListingHints::~ListingHints() {
  *alive_ = false;
  CancelTimer();
}

void ListingHints::Start() { BeginRound(); }

void ListingHints::Stop() {
  stopped_ = true;
  CancelTimer();
}

void ListingHints::CancelTimer() {
  if (timer_) deps_.clock->Cancel(*std::exchange(timer_, std::nullopt));
}

void ListingHints::Arm(int64_t seconds) {
  if (stopped_) return;
  CancelTimer();
  const SteadyTime at = deps_.clock->Now() + std::chrono::seconds(std::max<int64_t>(1, seconds));
  timer_ = deps_.clock->RunAt(at, [this] {
    timer_.reset();
    BeginRound();
  });
}

void ListingHints::BeginRound() {
  if (stopped_ || round_) return;
  ledger_.SetTracked(deps_.tracked());
  ledger_.SetFollowedOwners(deps_.followed_owners ? deps_.followed_owners()
                                                 : std::vector<std::string>{});
  round_ = std::make_unique<Round>();
  round_->started = deps_.clock->Now();
  if (ledger_.owners() == 0) return EndRound();
  // With nothing known about the feed's rate, its first page comes first: the choice between
  // the feed and the owners' listings is made on what it shows.
  if (!ledger_.feed_rate() && ledger_.owners() > 1) {
    round_->probing = true;
    ++round_->reading;
    ReadSource("", true);
    return;
  }
  PlanRound(false);
  ReadNext();
}

void ListingHints::PlanRound(bool probed) {
  Round& r = *round_;
  r.plan = ledger_.Plan(options_.interval_s);
  for (const std::string& s : r.plan.sources) {
    const bool probe = r.plan.mode == ListingMode::kOwners && s.empty();
    // A first page just read is not read again, unless the feed must go down to a watermark.
    if (probed && s.empty() && (probe || !ledger_.watermark())) continue;
    r.queue.emplace_back(s, probe);
  }
}

void ListingHints::ReadNext() {
  Round& r = *round_;
  while (r.reading < std::max(1, options_.parallel) && !r.queue.empty() && !r.error && !stopped_) {
    auto [source, probe] = r.queue.front();
    r.queue.pop_front();
    ++r.reading;
    ReadSource(source, probe);
  }
  if (r.reading == 0) EndRound();
}

void ListingHints::ReadSource(const std::string& source, bool probe) {
  hub::ListModelsOptions o;
  o.author = source;
  o.sort = "lastModified";
  o.expand = {"sha", "lastModified"};
  if (deps_.follow_details && deps_.follow_details()) {
    o.expand.insert(o.expand.end(),
                    {"pipeline_tag", "library_name", "tags", "downloads", "likes"});
  }
  o.page_size = options_.page_size;
  const size_t page = static_cast<size_t>(std::max(1, options_.page_size));
  o.max_results = probe ? page : page * static_cast<size_t>(std::max(1, options_.max_pages));
  o.last_wanted = [this, alive = alive_](const hub::ModelSummary& m) {
    if (!*alive) return true;  // gone: read no further page
    const std::optional<int64_t> t =
        m.last_modified ? advisory::ParseTime(*m.last_modified) : std::nullopt;
    return !t || ledger_.LastWanted(*t);
  };
  deps_.hub->ListModels(std::move(o), [this, alive = alive_, source](auto result, auto& stats) {
    if (*alive) OnRead(source, std::move(result), stats);
  });
}

void ListingHints::OnRead(const std::string& source,
                          hub::HubResult<std::vector<hub::ModelSummary>> result,
                          const hub::CallStats& stats) {
  Round& r = *round_;
  --r.reading;
  r.requests += stats.requests;
  const std::string name =
      source.empty() ? std::string("the Hub-wide listing") : "the listing of " + source;
  if (!result.ok()) {
    if (!r.error) r.error = name + ": " + result.error().ToString();
  } else {
    std::vector<ListedModel> items;
    items.reserve(result->size());
    for (const hub::ModelSummary& m : *result) {
      const std::optional<int64_t> t =
          m.last_modified ? advisory::ParseTime(*m.last_modified) : std::nullopt;
      if (!m.sha || !t) {  // asked for both: an item without them is not the listing we know
        if (!r.error) r.error = name + ": an item has no sha or lastModified";
        break;
      }
      items.push_back({m.id, *m.sha, *t});
    }
    if (!stopped_ && deps_.listed) deps_.listed(*result);
    if (!stopped_) {
      for (const ListedModel& moved : ledger_.Consume(source, items)) {
        if (!options_.hint) continue;
        // No stored head: never polled (its first poll is due anyway), or it does not track
        // the default branch the listing speaks for.
        const std::optional<std::string> head = deps_.stored_head(moved.id);
        if (!head || *head == moved.sha) continue;
        ++r.hints;
        deps_.metrics
            ->counter("hubwatch_hints_received_total", "change hints received",
                      {{"source", "listing"}})
            .Add();
        deps_.hint(moved.id, moved.sha);
      }
    }
  }
  if (std::exchange(r.probing, false) && !r.error) PlanRound(true);
  ReadNext();
}

void ListingHints::EndRound() {
  std::unique_ptr<Round> r = std::move(round_);
  const bool complete = !r->error;
  ledger_.EndRound(complete);
  if (r->requests > 0) deps_.spend(r->requests);
  service::Metrics& m = *deps_.metrics;
  const std::string mode(ListingModeName(r->plan.mode));
  last_mode_ = r->plan.mode;
  m.counter("hubwatch_listing_rounds_total", "listing hint rounds by outcome",
            {{"outcome", complete ? "ok" : "error"}})
      .Add();
  m.counter("hubwatch_listing_requests_total", "requests made to read the listing, by mode",
            {{"mode", mode}})
      .Add(static_cast<uint64_t>(r->requests));
  for (ListingMode each : {ListingMode::kOwners, ListingMode::kFeed}) {
    m.gauge("hubwatch_listing_mode", "1 for the listing mode of the last round",
            {{"mode", std::string(ListingModeName(each))}})
        .Set(each == r->plan.mode ? 1 : 0);
  }
  if (ledger_.feed_rate()) {
    m.gauge("hubwatch_listing_feed_rate", "changes per second on the Hub-wide listing")
        .Set(*ledger_.feed_rate());
  }
  const double seconds = std::chrono::duration<double>(deps_.clock->Now() - r->started).count();
  if (stopped_) return;  // the service is stopping: nothing to say or to arm
  if (!complete) {
    deps_.log->warn(
        "listing round failed after {} request(s): {}; the next round reads on "
        "from the same watermark",
        r->requests, *r->error);
  } else {
    if (ledger_.watermark()) deps_.save_watermark(*ledger_.watermark());
    deps_.log->debug(
        "listing round ({}, {} owner(s), feed cost {}): {} request(s), {} hint(s), "
        "{:.3f} s",
        mode, ledger_.owners(), r->plan.feed_cost, r->requests, r->hints, seconds);
  }
  Arm(options_.interval_s);
}

}  // namespace hubwatch::schedule
