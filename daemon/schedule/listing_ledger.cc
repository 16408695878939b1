#include "daemon/schedule/listing_ledger.h"

#include <algorithm>
#include <cmath>

namespace hubwatch::schedule {

std::string_view ListingModeName(ListingMode mode) {
  return mode == ListingMode::kFeed ? "feed" : "owners";
}

uint64_t ListingLedger::ShaDigest(const std::string& sha) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : sha) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;  // 0 means "none listed yet"
}

void ListingLedger::SetTracked(const std::vector<std::string>& repos) {
  // Every round passes the tracked repos; most rounds they are the ones already held.
  std::vector<bool> seen(tracked_.end(), false);
  size_t distinct = 0;
  const bool held = std::all_of(repos.begin(), repos.end(), [&](const std::string& id) {
    const std::optional<RepoIds::Index> i = tracked_.Find(id);
    if (i && !seen[*i]) {
      seen[*i] = true;
      ++distinct;
    }
    return i.has_value();
  });
  if (held && distinct == tracked_.size()) return;
  RepoIds next;
  for (const std::string& id : repos) next.Intern(id);
  std::vector<uint64_t> shas(next.end(), 0);
  for (RepoIds::Index i = 0; i < tracked_.end(); ++i) {
    if (!tracked_.live(i) || shas_[i] == 0) continue;
    if (std::optional<RepoIds::Index> j = next.Find(tracked_.Name(i))) shas[*j] = shas_[i];
  }
  tracked_ = std::move(next);
  shas_ = std::move(shas);
  owners_.clear();
  for (RepoIds::Index i = 0; i < tracked_.end(); ++i) {
    const std::string_view id = tracked_.Name(i);
    const size_t slash = id.find('/');
    if (slash != std::string_view::npos) ++owners_[std::string(id.substr(0, slash))];
  }
}

void ListingLedger::SetFollowedOwners(const std::vector<std::string>& owners) {
  followed_owners_.clear();
  for (const std::string& owner : owners) {
    if (!owners_.count(owner)) followed_owners_.insert(owner);
  }
}

size_t ListingLedger::owners() const { return owners_.size() + followed_owners_.size(); }

ListingRound ListingLedger::Plan(int64_t interval_s) {
  ListingRound round;
  round.owners_cost = static_cast<int64_t>(owners());
  if (feed_rate_) {
    const double changes = *feed_rate_ * static_cast<double>(std::max<int64_t>(1, interval_s));
    round.feed_cost = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(changes / std::max(1, options_.page_size))));
  }
  const bool probe = !feed_rate_ || ++rounds_since_probe_ >= options_.probe_every;
  if (feed_rate_ && round.feed_cost < round.owners_cost) {
    round.mode = ListingMode::kFeed;
    round.sources = {""};
    rounds_since_probe_ = 0;
    return round;
  }
  round.mode = ListingMode::kOwners;
  for (const auto& [owner, count] : owners_) round.sources.push_back(owner);
  round.sources.insert(round.sources.end(), followed_owners_.begin(), followed_owners_.end());
  if (probe && owners() > 1) {  // one owner: the feed cannot cost less
    round.sources.push_back("");
    rounds_since_probe_ = 0;
  }
  return round;
}

bool ListingLedger::LastWanted(int64_t last_modified) const {
  return !watermark_ || last_modified <= *watermark_ - options_.overlap_s;
}

std::vector<ListedModel> ListingLedger::Consume(const std::string& source,
                                                const std::vector<ListedModel>& items) {
  std::vector<ListedModel> fresh;
  for (const ListedModel& item : items) {
    newest_seen_ = std::max(newest_seen_, item.last_modified);
    const std::optional<RepoIds::Index> i = tracked_.Find(item.id);
    if (!i) continue;
    const uint64_t sha = ShaDigest(item.sha);
    if (shas_[*i] == sha) continue;
    shas_[*i] = sha;
    fresh.push_back(item);
  }
  if (source.empty() && !items.empty()) {  // the feed: measure the Hub's rate of change
    const int64_t newest = items.front().last_modified;
    const int64_t oldest = items.back().last_modified;
    double rate = 0;
    if (watermark_ && LastWanted(oldest)) {  // read down to the watermark: every change since
      const auto since = std::count_if(items.begin(), items.end(), [this](const ListedModel& m) {
        return m.last_modified > *watermark_;
      });
      rate = static_cast<double>(since) /
             static_cast<double>(std::max<int64_t>(1, newest - *watermark_));
    } else {  // a page and no more: its own span
      rate = static_cast<double>(items.size()) /
             static_cast<double>(std::max<int64_t>(1, newest - oldest));
    }
    feed_rate_ = rate;
  }
  return fresh;
}

void ListingLedger::EndRound(bool complete) {
  if (complete && newest_seen_ > 0) watermark_ = std::max(watermark_.value_or(0), newest_seen_);
  newest_seen_ = 0;
}

}  // namespace hubwatch::schedule
