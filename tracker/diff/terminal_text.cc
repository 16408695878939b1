#include "tracker/diff/terminal_text.h"

#include "estimator/format.h"
#include "tracker/diff/json_text.h"

namespace hubwatch::diff {

std::string EscapeForTerminal(std::string_view text) {
  std::string valid;
  valid.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = Utf8SequenceLength(text, i);
    if (length > 0) {
      valid.append(text.substr(i, length));
      i += length;
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    const auto byte = static_cast<unsigned char>(text[i++]);
    valid += "\\x";
    valid += kHex[byte >> 4];
    valid += kHex[byte & 0xF];
  }
  return EscapeControls(valid);
}

}  // namespace hubwatch::diff
