#include "daemon/page/html_markup.h"

#include "daemon/page/href.h"

namespace hubwatch::page {

const char* ToneClass(Tone t) {
  switch (t) {
    case Tone::kCosmetic:
      return "cosmetic";
    case Tone::kBehavioral:
      return "behavioral";
    case Tone::kBreaking:
      return "breaking";
    case Tone::kGood:
      return "good";
    case Tone::kWarn:
      return "warn";
    case Tone::kBad:
      return "bad";
    case Tone::kNone:
      break;
  }
  return "none";
}

void HtmlMarkup::Element(std::string_view tag, std::string_view text) {
  Raw("<");
  Raw(tag);
  Raw(">");
  Text(text);
  Raw("</");
  Raw(tag);
  Raw(">");
}

void HtmlMarkup::Spans(const page::Spans& spans) {
  for (const Span& s : spans) SpanOut(s);
}

void HtmlMarkup::SpanOut(const Span& s) {
  switch (s.kind) {
    case Span::Kind::kText:
      Text(s.text);
      return;
    case Span::Kind::kStrong:
      Element("strong", s.text);
      return;
    case Span::Kind::kCode:
      Element("code", s.text);
      return;
    case Span::Kind::kLink:
      if (!IsSafeHref(s.href)) return Text(s.text);
      Raw("<a href=\"");
      Text(s.href);
      Raw("\">");
      Text(s.text);
      Raw("</a>");
      return;
    case Span::Kind::kChip:
      Raw("<span class=\"chip ");
      Raw(ToneClass(s.tone));
      Raw("\">");
      Text(s.text);
      Raw("</span>");
      return;
  }
}

}  // namespace hubwatch::page
