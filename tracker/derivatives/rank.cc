#include "tracker/derivatives/rank.h"

#include <algorithm>
#include <limits>

namespace hubwatch::derivatives {
namespace {

int64_t Clamp(std::optional<uint64_t> n) {
  if (!n) return 0;
  return static_cast<int64_t>(std::min<uint64_t>(*n, std::numeric_limits<int64_t>::max()));
}

// "YYYY-MM-DDTHH:MM:SS", optional fraction, "Z": what the Hub writes; compared as text.
bool IsUtcTime(const std::string& t) {
  if (t.size() < 20 || t.size() > 32 || t.back() != 'Z') return false;
  static constexpr char kShape[] = "dddd-dd-ddTdd:dd:dd";
  for (size_t i = 0; i + 1 < sizeof kShape; ++i) {
    const bool digit = t[i] >= '0' && t[i] <= '9';
    if (kShape[i] == 'd' ? !digit : t[i] != kShape[i]) return false;
  }
  if (t.size() == 20) return true;
  if (t[19] != '.' || t.size() == 21) return false;
  return std::all_of(t.begin() + 20, t.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
}

std::string Describe(const Signals& s) {
  return std::to_string(s.downloads) + " downloads, " + std::to_string(s.likes) + " likes, " +
         (s.created_at.empty() ? std::string("created at an unknown date")
                               : "created " + s.created_at);
}

std::string Ordinal(size_t n) {
  const size_t tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : n % 10 == 1              ? "st"
                       : n % 10 == 2              ? "nd"
                       : n % 10 == 3              ? "rd"
                                                  : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

Signals SignalsOf(std::optional<uint64_t> downloads, std::optional<uint64_t> likes,
                  const std::optional<std::string>& created_at) {
  Signals s;
  s.downloads = Clamp(downloads);
  s.likes = Clamp(likes);
  if (created_at && IsUtcTime(*created_at)) s.created_at = *created_at;
  return s;
}

bool RanksBefore(const Candidate& a, const Candidate& b) {
  if (a.signals.downloads != b.signals.downloads) return a.signals.downloads > b.signals.downloads;
  if (a.signals.likes != b.signals.likes) return a.signals.likes > b.signals.likes;
  if (a.signals.created_at != b.signals.created_at)
    return a.signals.created_at < b.signals.created_at;  // "" (unknown) first
  if (a.known != b.known) return a.known;
  return a.id < b.id;
}

Ranking Rank(std::vector<Candidate> candidates, size_t max) {
  std::sort(candidates.begin(), candidates.end(), RanksBefore);
  Ranking out;
  const size_t kept = std::min(max, candidates.size());
  out.kept.assign(std::make_move_iterator(candidates.begin()),
                  std::make_move_iterator(candidates.begin() + static_cast<ptrdiff_t>(kept)));
  out.below.assign(std::make_move_iterator(candidates.begin() + static_cast<ptrdiff_t>(kept)),
                   std::make_move_iterator(candidates.end()));
  return out;
}

std::string RankedOutDetail(const Candidate& out, size_t position, size_t candidates, size_t max,
                            const Candidate& last_kept) {
  return "ranked " + Ordinal(position) + " of " + std::to_string(candidates) + " for " +
         std::to_string(max) + " places: " + Describe(out.signals) + "; the last kept has " +
         Describe(last_kept.signals);
}

}  // namespace hubwatch::derivatives
