#pragma once

// JavaScript number semantics that a rendered prompt can observe: how numbers print, and how
// strings convert to numbers. The reference implementation keeps every number as a double and
// prints it with JavaScript's rules, e.g. 0.1 + 0.2 prints 0.30000000000000004 and 1e21 prints
// 1e+21; integers and floats differ only in how they print (IntegerValue vs FloatValue).
//
// Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace hubwatch::chat_template::js {

// Number.prototype.toString() (shortest round-trip digits, ECMAScript formatting rules).
std::string NumberToString(double value);

// How the reference prints a float value: integral floats keep one decimal ("2.0"), -0 prints
// "-0.0", everything else as NumberToString.
std::string FloatToString(double value);

// The abstract operation ToNumber(string), used by loose equality ("1" == 1): NaN when the
// whole string is not a numeric literal, 0 for an empty or all-whitespace string.
double StringToNumber(std::string_view s);

// parseInt(s, 10) and parseFloat(s): parse the longest numeric prefix after leading
// whitespace; NaN when there is none.
double ParseInt(std::string_view s);
double ParseFloat(std::string_view s);

}  // namespace hubwatch::chat_template::js
