#pragma once

// HtmlMarkup: appends HTML to a string the caller owns, keeping markup and text apart. Raw takes
// markup the renderer wrote itself (literals, never a string from a Document); Text takes any
// other string and escapes it, fit for text and for double-quoted attribute values alike
// (escape.h); Spans writes inline spans: a link only to an href IsSafeHref accepts (else just
// its text), a chip with its tone's stylesheet class. Borrows `out`, which must outlive it; one
// per rendering, used from one thread.

#include <string>
#include <string_view>

#include "daemon/page/document.h"
#include "daemon/page/escape.h"

namespace hubwatch::page {

class HtmlMarkup {
 public:
  explicit HtmlMarkup(std::string& out) : out_(out) {}

  void Raw(std::string_view markup) { out_ += markup; }
  void Text(std::string_view text) { AppendHtml(out_, text); }
  // <tag>text</tag>; `tag` is the renderer's own.
  void Element(std::string_view tag, std::string_view text);

  void Spans(const page::Spans& spans);
  void SpanOut(const Span& span);

 private:
  std::string& out_;
};

// The stylesheet's class for a tone: "cosmetic", "breaking", ..., "none".
const char* ToneClass(Tone tone);

}  // namespace hubwatch::page
