// Terminal escaping: control characters, C1 controls and invalid UTF-8 become visible text.

#include "tracker/diff/terminal_text.h"

#include <gtest/gtest.h>

namespace hubwatch::diff {
namespace {

TEST(TerminalText, ControlCharactersBecomeVisibleEscapes) {
  EXPECT_EQ(EscapeForTerminal("fix \x1b[2J\x1b[31mred"), "fix \\x1b[2J\\x1b[31mred");
  EXPECT_EQ(EscapeForTerminal("title\n2026-01-01 info  fake line"),
            "title\\x0a2026-01-01 info  fake line");
  EXPECT_EQ(EscapeForTerminal(std::string("a\0b\r\t\x7f", 6)), "a\\x00b\\x0d\\x09\\x7f");
}

TEST(TerminalText, C1ControlsAndInvalidUtf8AreEscaped) {
  EXPECT_EQ(EscapeForTerminal("\xc2\x9b"
                              "2J"),
            "\\u009b2J");                               // CSI as one character
  EXPECT_EQ(EscapeForTerminal("\xc2\x85"), "\\u0085");  // NEL
  EXPECT_EQ(EscapeForTerminal("\xff\xc2"), "\\xff\\xc2");
  // A lone C2 before a C1 continuation byte pattern that is not valid: each byte escaped.
  EXPECT_EQ(EscapeForTerminal("\x9b[2J"), "\\x9b[2J");
  EXPECT_EQ(EscapeForTerminal("\xe2\x80"), "\\xe2\\x80");  // truncated sequence
}

// Trojan Source: an override or isolate would make "fix_eos\u202egnp.txt" read as another name.
TEST(TerminalText, BidiControlsAreShownNotApplied) {
  EXPECT_EQ(EscapeForTerminal("fix_eos\xe2\x80\xaegnp.exe"), "fix_eos\\u202egnp.exe");
  EXPECT_EQ(EscapeForTerminal("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"),
            "\\u202a\\u202b\\u202c\\u202d");
  EXPECT_EQ(EscapeForTerminal("\xe2\x81\xa6x\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"),
            "\\u2066x\\u2067\\u2068\\u2069");
  EXPECT_EQ(EscapeForTerminal("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"), "\\u200e\\u200f\\u061c");
  // Neighbours that are not bidi controls are kept: U+2028 is escaped elsewhere as a line
  // separator by JSON, U+200D (ZWJ) joins emoji, U+2065 is unassigned.
  EXPECT_EQ(EscapeForTerminal("\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5"),
            "\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5");
}

TEST(TerminalText, PrintableTextIsKept) {
  EXPECT_EQ(EscapeForTerminal("google/gemma-2-9b-it@1a2b3c4: 3 changes"),
            "google/gemma-2-9b-it@1a2b3c4: 3 changes");
  EXPECT_EQ(EscapeForTerminal("caf\xc3\xa9 \xc2\xa0 \xe2\x80\x94 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xc2\xa0 \xe2\x80\x94 \xf0\x9f\x98\x80");
  EXPECT_EQ(EscapeForTerminal("a literal \\x1b stays"), "a literal \\x1b stays");
  EXPECT_EQ(EscapeForTerminal(""), "");
}

}  // namespace
}  // namespace hubwatch::diff
