#pragma once

// Count: an exact unsigned 64-bit number of elements or bytes whose arithmetic never wraps.
// An operation that would overflow poisons the result, and every value computed from a poisoned
// one stays poisoned, so a whole computation can be checked once at the end. Plain value type.

#include <cstdint>
#include <optional>

namespace hubwatch {

class Count {
 public:
  constexpr Count() = default;
  constexpr Count(uint64_t value) : value_(value) {}  // NOLINT: implicit by design

  static constexpr Count Poisoned() {
    Count c;
    c.overflowed_ = true;
    return c;
  }

  constexpr bool overflowed() const { return overflowed_; }
  // Meaningful only when !overflowed().
  constexpr uint64_t value() const { return value_; }

  friend constexpr Count operator+(Count a, Count b) {
    Count r;
    r.overflowed_ =
        a.overflowed_ || b.overflowed_ || __builtin_add_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  friend constexpr Count operator*(Count a, Count b) {
    Count r;
    r.overflowed_ =
        a.overflowed_ || b.overflowed_ || __builtin_mul_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  // Subtraction below zero poisons too: a count is never negative.
  friend constexpr Count operator-(Count a, Count b) {
    Count r;
    r.overflowed_ =
        a.overflowed_ || b.overflowed_ || __builtin_sub_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  constexpr Count& operator+=(Count b) { return *this = *this + b; }
  constexpr Count& operator*=(Count b) { return *this = *this * b; }

  // a - b as a signed number; nullopt when either is poisoned or the difference leaves int64.
  friend constexpr std::optional<int64_t> SignedDifference(Count a, Count b) {
    int64_t r = 0;
    if (a.overflowed_ || b.overflowed_ || a.value_ > INT64_MAX || b.value_ > INT64_MAX ||
        __builtin_sub_overflow(static_cast<int64_t>(a.value_), static_cast<int64_t>(b.value_),
                               &r)) {
      return std::nullopt;
    }
    return r;
  }

  friend constexpr bool operator==(Count a, Count b) {
    return a.overflowed_ == b.overflowed_ && a.value_ == b.value_;
  }

 private:
  uint64_t value_ = 0;
  bool overflowed_ = false;
};

}  // namespace hubwatch
