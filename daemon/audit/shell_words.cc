#include "daemon/audit/shell_words.h"

#include <cstddef>
#include <utility>

namespace hubwatch::audit {
namespace {

bool IsVariableChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

class Splitter {
 public:
  explicit Splitter(std::string_view s) : s_(s) {}

  std::vector<ShellCommand> Run() {
    while (i_ < s_.size()) Step();
    EndWord();
    EndCommand();
    return std::move(commands_);
  }

 private:
  void Step() {
    char c = s_[i_];
    if (c == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
      EndWord();  // a continuation joins the next line to this command
      i_ += (s_[i_ + 1] == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n') ? 3 : 2;
      NewLine();
      return;
    }
    if (c == '\n') {
      EndWord();
      EndCommand();
      ++i_;
      NewLine();
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      EndWord();
      ++i_;
      return;
    }
    if (c == '#' && !in_word_) {
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      return;
    }
    if (c == ';' || c == '&' || c == '|' || c == '`' || c == '(' || c == ')') {
      EndWord();
      EndCommand();
      ++i_;
      return;
    }
    if (c == '$' && i_ + 1 < s_.size() && s_[i_ + 1] == '(') {
      // $(NAME) is a make variable; $(command ...) a substitution that starts a command
      size_t j = i_ + 2;
      while (j < s_.size() && IsVariableChar(s_[j])) ++j;
      if (j > i_ + 2 && j < s_.size() && s_[j] == ')') {
        Append(s_.substr(i_, j + 1 - i_));
        i_ = j + 1;
        return;
      }
      EndWord();
      EndCommand();
      i_ += 2;
      return;
    }
    if (c == '\'' || c == '"') {
      Quoted(c);
      return;
    }
    if (c == '\\' && i_ + 1 < s_.size()) {
      Append(s_.substr(i_ + 1, 1));
      i_ += 2;
      return;
    }
    Append(s_.substr(i_, 1));
    ++i_;
  }

  void Quoted(char quote) {
    StartWord();
    ++i_;
    while (i_ < s_.size() && s_[i_] != quote) {
      if (quote == '"' && s_[i_] == '\\' && i_ + 1 < s_.size()) {
        if (s_[i_ + 1] == '\n') {
          i_ += 2;
          NewLine();
          continue;
        }
        ++i_;
      }
      if (s_[i_] == '\n') {
        word_.text += '\n';
        ++i_;
        NewLine();
        continue;
      }
      word_.text += s_[i_++];
    }
    if (i_ < s_.size()) ++i_;  // the closing quote
  }

  void StartWord() {
    if (in_word_) return;
    in_word_ = true;
    word_.text.clear();
    word_.line = line_;
    word_.column = static_cast<int>(i_ - line_start_) + 1;
  }

  void Append(std::string_view text) {
    StartWord();
    word_.text += text;
  }

  void EndWord() {
    if (!in_word_) return;
    in_word_ = false;
    if (word_.line == line_) {
      word_.length = static_cast<int>(i_ - line_start_) + 1 - word_.column;
    }
    command_.push_back(std::move(word_));
    word_ = ShellWord();
  }

  void EndCommand() {
    if (!command_.empty()) commands_.push_back(std::move(command_));
    command_.clear();
  }

  void NewLine() {
    ++line_;
    line_start_ = i_;
  }

  std::string_view s_;
  size_t i_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
  bool in_word_ = false;
  ShellWord word_;
  ShellCommand command_;
  std::vector<ShellCommand> commands_;
};

}  // namespace

std::vector<ShellCommand> SplitShellCommands(std::string_view text) { return Splitter(text).Run(); }

}  // namespace hubwatch::audit
