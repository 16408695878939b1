#include "daemon/api/badge.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "daemon/api/xml_text.h"

namespace hubwatch::api {
namespace {

constexpr int64_t kWeek = 7 * 86400;

// Verdana advance widths (units of 1/2048 em) for [A-Z] and [a-z]; shields measures its badges
// in Verdana 11px. Other characters count as a digit's width (1302).
constexpr int kUpper[26] = {1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 862,
                            921,  1405, 1142, 1767, 1532, 1612, 1235, 1612, 1423,
                            1401, 1251, 1499, 1401, 2025, 1403, 1251, 1403};
constexpr int kLower[26] = {1229, 1271, 1066, 1271, 1218, 720,  1271, 1296, 562,
                            706,  1202, 562,  1993, 1296, 1240, 1271, 1271, 874,
                            1066, 807,  1296, 1202, 1675, 1202, 1202, 1051};

int GlyphUnits(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return kUpper[c - 'A'];
  if (c >= 'a' && c <= 'z') return kLower[c - 'a'];
  switch (c) {
    case ' ':
      return 720;
    case '.':
    case ',':
      return 745;
    case ':':
    case ';':
      return 889;
    case '-':
      return 864;
    case '(':
    case ')':
      return 931;
    case '/':
      return 1000;
    case '\'':
      return 550;
    default:
      return 1302;
  }
}

// Pixels at 11px, counting each UTF-8 sequence once.
double TextWidth(std::string_view text) {
  double units = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) units += GlyphUnits(c);
  }
  return units * 11.0 / 2048.0;
}

std::string ColorHex(std::string_view color) {
  if (color == "brightgreen") return "#4c1";
  if (color == "green") return "#97ca00";
  if (color == "yellow") return "#dfb317";
  if (color == "orange") return "#fe7d37";
  if (color == "red") return "#e05d44";
  if (color == "blue") return "#007ec6";
  return "#9f9f9f";  // lightgrey
}

std::string Plural(int64_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string Px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

std::string KindLabel(std::string_view kind) {
  std::string out(kind);
  for (char& c : out) {
    if (c == '_') c = ' ';
  }
  return out;
}

std::string TimeAgo(int64_t seconds) {
  if (seconds < 60) return "just now";
  if (seconds < 3600) return Plural(seconds / 60, "minute") + " ago";
  if (seconds < 86400) return Plural(seconds / 3600, "hour") + " ago";
  if (seconds < 30 * 86400) return Plural(seconds / 86400, "day") + " ago";
  if (seconds < 365 * 86400) return Plural(seconds / (30 * 86400), "month") + " ago";
  return Plural(seconds / (365 * 86400), "year") + " ago";
}

Badge PinBadge(std::string_view pin_sha, const store::ChangeTally& tally, std::string_view kind) {
  const int64_t n = tally.behavioral + tally.breaking;
  const std::string what = kind.empty() ? "change" : KindLabel(kind) + " change";
  Badge b;
  b.label = "hubwatch";
  if (n == 0) {
    b.message = "no " + what + "s since pin";
    b.color = "brightgreen";
  } else {
    b.message = Plural(n, what) + " since " + std::string(pin_sha.substr(0, 7));
    b.color = tally.breaking > 0 ? "red" : "orange";
  }
  return b;
}

Badge PinsBadge(const std::vector<store::PinStatus>& pins) {
  Badge b{.label = "hubwatch", .message = "no pins", .color = "lightgrey"};
  const store::PinStatus* worst = nullptr;
  for (const store::PinStatus& p : pins) {
    if (p.sha.empty()) {
      b.message = "pin " + p.pin.substr(0, 7) + " unknown";
      return b;
    }
    if (!worst || p.advisories > worst->advisories) worst = &p;
  }
  if (!worst) return b;
  if (worst->advisories == 0) {
    b.message = "pins current";
    b.color = "brightgreen";
  } else {
    b.message = worst->advisories == 1
                    ? "1 advisory affects " + worst->sha.substr(0, 7)
                    : std::to_string(worst->advisories) + " advisories affect " +
                          worst->sha.substr(0, 7);
    b.color = "orange";
  }
  return b;
}

Badge LastChangeBadge(std::string_view kind, std::optional<int64_t> changed_at, int64_t now) {
  Badge b;
  b.label = "hubwatch";
  const std::string subject = kind.empty() ? "" : KindLabel(kind) + " ";
  if (!changed_at) {
    b.message = kind.empty() ? "no changes" : "no " + KindLabel(kind) + " changes";
    b.color = "brightgreen";
    return b;
  }
  const int64_t age = std::max<int64_t>(0, now - *changed_at);
  b.message = subject + "changed " + TimeAgo(age);
  b.color = age < kWeek ? "orange" : "blue";
  return b;
}

Badge DerivativesBadge(const store::DerivativeTally& tally) {
  Badge b;
  b.label = "derivatives";
  if (tally.checked == 0) {
    b.message = "no derivatives checked";
    b.color = "lightgrey";
    return b;
  }
  b.message = std::to_string(tally.lagging) + " of " + std::to_string(tally.checked) + " lagging";
  b.color = tally.lagging > 0 ? "orange" : "brightgreen";
  return b;
}

nlohmann::json BadgeToShieldsJson(const Badge& badge) {
  nlohmann::json j = {{"schemaVersion", 1},
                      {"label", badge.label},
                      {"message", badge.message.empty() ? "unknown" : badge.message},
                      {"color", badge.color.empty() ? "lightgrey" : badge.color},
                      {"cacheSeconds", kBadgeCacheSeconds}};
  if (badge.is_error) j["isError"] = true;
  return j;
}

std::string RenderBadgeSvg(const Badge& badge) {
  const std::string label = XmlEscape(badge.label);
  const std::string message = XmlEscape(badge.message.empty() ? "unknown" : badge.message);
  const double lw = badge.label.empty() ? 0 : std::round(TextWidth(badge.label) + 10);
  const double mw = std::round(TextWidth(badge.message) + 10);
  const double w = lw + mw;
  const std::string title = badge.label.empty() ? message : label + ": " + message;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Px(w) +
                    "\" height=\"20\" role=\"img\" aria-label=\"" + title + "\"><title>" + title +
                    "</title>";
  svg +=
      "<linearGradient id=\"s\" x2=\"0\" y2=\"100%\"><stop offset=\"0\" stop-color=\"#bbb\" "
      "stop-opacity=\".1\"/><stop offset=\"1\" stop-opacity=\".1\"/></linearGradient>";
  svg += "<clipPath id=\"r\"><rect width=\"" + Px(w) +
         "\" height=\"20\" rx=\"3\" fill=\"#fff\"/></clipPath><g clip-path=\"url(#r)\">";
  svg += "<rect width=\"" + Px(lw) + "\" height=\"20\" fill=\"#555\"/>";
  svg += "<rect x=\"" + Px(lw) + "\" width=\"" + Px(mw) + "\" height=\"20\" fill=\"" +
         ColorHex(badge.is_error ? "red" : badge.color) + "\"/>";
  svg += "<rect width=\"" + Px(w) + "\" height=\"20\" fill=\"url(#s)\"/></g>";
  svg +=
      "<g fill=\"#fff\" text-anchor=\"middle\" "
      "font-family=\"Verdana,Geneva,DejaVu Sans,sans-serif\" font-size=\"11\">";
  auto text = [&](double x, const std::string& t) {
    svg += "<text x=\"" + Px(x) + "\" y=\"15\" fill=\"#010101\" fill-opacity=\".3\">" + t +
           "</text><text x=\"" + Px(x) + "\" y=\"14\">" + t + "</text>";
  };
  if (!badge.label.empty()) text(lw / 2, label);
  text(lw + mw / 2, message);
  svg += "</g></svg>";
  return svg;
}

}  // namespace hubwatch::api
