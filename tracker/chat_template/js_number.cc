#include "tracker/chat_template/js_number.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "tracker/chat_template/text.h"

namespace hubwatch::chat_template::js {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Parses s (already validated as a decimal literal without sign) with correct rounding.
double ParseDecimal(std::string_view s) {
  double value = 0;
  const auto result = std::from_chars(s.data(), s.data() + s.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    // from_chars reports overflow/underflow instead of returning inf/0.
    bool has_nonzero_mantissa = false;
    for (char c : s) {
      if (c == 'e' || c == 'E') break;
      if (c >= '1' && c <= '9') has_nonzero_mantissa = true;
    }
    const size_t e = s.find_first_of("eE");
    const bool negative_exponent =
        e != std::string_view::npos && e + 1 < s.size() && s[e + 1] == '-';
    return has_nonzero_mantissa && !negative_exponent ? kInfinity : 0.0;
  }
  return value;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of the longest StrUnsignedDecimalLiteral prefix of s (0 if none). Sets is_infinity
// when the prefix is "Infinity".
size_t DecimalPrefix(std::string_view s, bool& is_infinity) {
  is_infinity = false;
  if (s.substr(0, 8) == "Infinity") {
    is_infinity = true;
    return 8;
  }
  size_t i = 0;
  size_t int_digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++int_digits;
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    while (j < s.size() && IsDigit(s[j])) ++j, ++frac_digits;
    if (int_digits > 0 || frac_digits > 0) i = j;
  }
  if (int_digits == 0 && frac_digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    const size_t digits_start = j;
    while (j < s.size() && IsDigit(s[j])) ++j;
    if (j > digits_start) i = j;
  }
  return i;
}

double ParseSignedDecimal(std::string_view s, size_t& consumed) {
  double sign = 1;
  size_t start = 0;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    sign = s[0] == '-' ? -1 : 1;
    start = 1;
  }
  bool is_infinity = false;
  const size_t n = DecimalPrefix(s.substr(start), is_infinity);
  if (n == 0) {
    consumed = 0;
    return kNaN;
  }
  consumed = start + n;
  if (is_infinity) return sign * kInfinity;
  std::string literal(s.substr(start, n));
  // from_chars does not accept a leading '.' or a trailing '.'; normalise.
  if (literal[0] == '.') literal.insert(literal.begin(), '0');
  const size_t dot = literal.find('.');
  if (dot != std::string::npos && (dot + 1 == literal.size() || !IsDigit(literal[dot + 1]))) {
    literal.insert(dot + 1, "0");
  }
  return sign * ParseDecimal(literal);
}

}  // namespace

std::string NumberToString(double value) {
  if (std::isnan(value)) return "NaN";
  if (value == 0) return "0";
  if (std::isinf(value)) return value < 0 ? "-Infinity" : "Infinity";
  if (value < 0) return "-" + NumberToString(-value);

  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  const std::string_view sci(buffer, static_cast<size_t>(result.ptr - buffer));
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exponent);
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;

  if (k <= n && n <= 21) return digits + std::string(static_cast<size_t>(n - k), '0');
  if (0 < n && n <= 21) return digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  const int e = n - 1;
  std::string out = digits.substr(0, 1);
  if (k > 1) out += "." + digits.substr(1);
  out += e < 0 ? "e-" : "e+";
  out += std::to_string(e < 0 ? -e : e);
  return out;
}

std::string FloatToString(double value) {
  if (value == 0 && std::signbit(value)) return "-0.0";
  if (std::isfinite(value) && std::fmod(value, 1.0) == 0) {
    if (std::fabs(value) >= 1e21) return NumberToString(value);
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.0f", value);  // exact, as toFixed(1) is
    return std::string(buffer) + ".0";
  }
  return NumberToString(value);
}

double StringToNumber(std::string_view s) {
  s = text::Trim(s);
  if (s.empty()) return 0;
  if (s.size() > 2 && s[0] == '0') {
    int base = 0;
    if (s[1] == 'x' || s[1] == 'X') base = 16;
    if (s[1] == 'o' || s[1] == 'O') base = 8;
    if (s[1] == 'b' || s[1] == 'B') base = 2;
    if (base != 0) {
      double value = 0;
      for (char c : s.substr(2)) {
        int digit = -1;
        if (c >= '0' && c <= '9') digit = c - '0';
        if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        if (digit < 0 || digit >= base) return kNaN;
        value = value * base + digit;
      }
      return value;
    }
  }
  size_t consumed = 0;
  const double value = ParseSignedDecimal(s, consumed);
  return consumed == s.size() ? value : kNaN;
}

double ParseInt(std::string_view s) {
  s = text::TrimStart(s);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  if (n == 0) return kNaN;
  const double value = ParseDecimal(s.substr(0, n));
  return negative ? -value : value;
}

double ParseFloat(std::string_view s) {
  s = text::TrimStart(s);
  size_t consumed = 0;
  return ParseSignedDecimal(s, consumed);
}

}  // namespace hubwatch::chat_template::js
