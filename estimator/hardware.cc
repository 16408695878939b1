#include "estimator/hardware.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "estimator/base/text.h"

namespace hubwatch {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ParsePositive(std::string_view s, double& out) {
  s = Trim(s);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(out) && out > 0;
}

// Aliases people type for the known cards.
struct Alias {
  std::string_view alias;
  std::string_view id;
};
constexpr Alias kAliases[] = {
    {"a100", "a100-80gb"},   {"a100-40", "a100-40gb"},   {"a100-80", "a100-80gb"},
    {"h100", "h100-80gb"},   {"h100-80", "h100-80gb"},   {"h200", "h200-141gb"},
    {"b200", "b200-180gb"},  {"mi300x", "mi300x-192gb"}, {"4090", "rtx4090"},
    {"rtx-4090", "rtx4090"},
};

}  // namespace

const std::vector<Card>& KnownCards() {
  // Memory and dense bf16 peaks from the vendors' datasheets (SXM parts for A100/H100/H200/B200;
  // T4 has no bf16, its fp16 peak is given). Prices: typical on-demand list prices for one card,
  // an assumption to override with --cards id=GB:TFLOPS:USD.
  static const std::vector<Card> cards = {
      {"t4", "T4", 16, 65, 0.35},
      {"l4", "L4", 24, 121, 0.80},
      {"a10g", "A10G", 24, 70, 1.01},
      {"rtx4090", "RTX 4090", 24, 165.2, 0.69},
      {"a100-40gb", "A100 40GB", 40, 312, 1.29},
      {"a100-80gb", "A100 80GB", 80, 312, 1.79},
      {"h100-80gb", "H100 80GB", 80, 989, 2.99},
      {"h200-141gb", "H200", 141, 989, 3.79},
      {"b200-180gb", "B200", 180, 2250, 5.99},
      {"mi300x-192gb", "MI300X", 192, 1307, 3.49},
  };
  return cards;
}

Result<std::vector<Card>> ParseCards(std::string_view list) {
  if (Trim(list).empty()) return KnownCards();
  std::vector<Card> out;
  size_t entries = 0;
  // Adds c unless a card of its id is already there; fails past kMaxCards.
  auto add = [&out](Card c, bool custom) -> Status {
    for (const Card& have : out) {
      if (have.id != c.id) continue;
      if (custom) {
        return Error::InvalidInput("--cards: '" + Clip(c.id) + "' is given twice");
      }
      return Status::Ok();
    }
    if (out.size() == kMaxCards) {
      return Error::InvalidInput("--cards: at most " + std::to_string(kMaxCards) +
                                 " different cards in one list");
    }
    out.push_back(std::move(c));
    return Status::Ok();
  };
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = Trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    if (++entries > kMaxCardEntries) {
      return Error::InvalidInput("--cards: at most " + std::to_string(kMaxCardEntries) +
                                 " entries in one list");
    }
    if (const size_t eq = item.find('='); eq != std::string_view::npos) {
      Card c;
      c.id = Lower(Trim(item.substr(0, eq)));
      c.name = std::string(Trim(item.substr(0, eq)));
      const std::string_view spec = item.substr(eq + 1);
      const size_t c1 = spec.find(':');
      const size_t c2 = c1 == std::string_view::npos ? c1 : spec.find(':', c1 + 1);
      if (c.id.empty() || c2 == std::string_view::npos ||
          !ParsePositive(spec.substr(0, c1), c.memory_gb) ||
          !ParsePositive(spec.substr(c1 + 1, c2 - c1 - 1), c.bf16_tflops) ||
          !ParsePositive(spec.substr(c2 + 1), c.usd_per_hour)) {
        return Error::InvalidInput("--cards: '" + Clip(item) +
                                   "' is not ID=MEMORY_GB:TFLOPS:USD_PER_HOUR");
      }
      if (Status s = add(std::move(c), true); !s.ok()) return s.error();
      continue;
    }
    std::string id = Lower(item);
    for (const Alias& a : kAliases) {
      if (a.alias == id) id = a.id;
    }
    auto it = std::find_if(KnownCards().begin(), KnownCards().end(),
                           [&](const Card& c) { return c.id == id; });
    if (it == KnownCards().end()) {
      std::string known;
      for (const Card& c : KnownCards()) known += (known.empty() ? "" : ", ") + c.id;
      return Error::InvalidInput("--cards: unknown card '" + Clip(item) +
                                 "' (known: " + known + "; or ID=MEMORY_GB:TFLOPS:USD_PER_HOUR)");
    }
    if (Status s = add(*it, false); !s.ok()) return s.error();
  }
  if (out.empty()) return Error::InvalidInput("--cards: no card given");
  return out;
}

}  // namespace hubwatch
