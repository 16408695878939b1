#include "daemon/audit/shell_variables.h"

#include <cstddef>
#include <initializer_list>
#include <utility>

namespace hubwatch::audit {
namespace {

bool IsKeyword(std::string_view w, std::initializer_list<std::string_view> set) {
  for (std::string_view k : set) {
    if (w == k) return true;
  }
  return false;
}

bool SameLiteral(const SourceValue& a, const SourceValue& b) {
  return a.kind == SourceValue::Kind::kLiteral && b.kind == SourceValue::Kind::kLiteral &&
         a.text == b.text;
}

}  // namespace

bool IsShellVariableName(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

void ShellVariables::ReadKeywords(ShellCommand& command) {
  size_t i = 0;
  for (; i < command.size(); ++i) {
    std::string_view w = command[i].text;
    if (IsKeyword(w, {"if", "while", "until", "{"})) {
      Open(false);  // what follows is the condition's command (or the group's first)
    } else if (IsKeyword(w, {"for", "select", "ifeq", "ifneq", "ifdef", "ifndef", "case"})) {
      Open(w == "case");  // the rest are the loop's words or the condition, not a command
      i = command.size();
      break;
    } else if (IsKeyword(w, {"then", "else", "elif", "do"})) {
      Switch();
    } else if (IsKeyword(w, {"fi", "done", "esac", "}", "endif"})) {
      Close();
    } else if (w == "function" || (w.size() > 2 && w.substr(w.size() - 2) == "()")) {
      while (i + 1 < command.size() && command[i + 1].text != "{") ++i;  // f() { / function f {
    } else if (!branches_.empty() && branches_.back().is_case && w.size() > 1 && w.back() == ')') {
      Switch();  // pattern) of a case arm
    } else {
      break;
    }
  }
  command.erase(command.begin(), command.begin() + static_cast<std::ptrdiff_t>(i));
}

void ShellVariables::Assign(std::string_view name, std::string_view value, SourceSpan span) {
  SourceValue v = Value(value, span);
  size_t serial = branches_.empty() ? 0 : branches_.back().serial;
  SourceValue before = Value("$" + std::string(name));
  Variable& var = variables_[std::string(name)];
  if (serial != 0 && var.serial != serial) {
    assigned_.push_back({serial, std::string(name), std::move(before), var.serial});
    var.serial = serial;
  }
  var.value = std::move(v);
}

SourceValue ShellVariables::Value(std::string_view word, SourceSpan span) const {
  if (word.find('$') == std::string_view::npos) {
    return SourceValue::Literal(std::string(word), span);
  }
  std::string_view name;
  std::string_view fallback;
  bool has_default = false;
  if (word.size() > 1 && word[0] == '$' && IsShellVariableName(word.substr(1))) {
    name = word.substr(1);
  } else if (word.size() > 3 && word[0] == '$' && (word[1] == '{' || word[1] == '(') &&
             word.back() == (word[1] == '{' ? '}' : ')')) {
    std::string_view inner = word.substr(2, word.size() - 3);
    size_t op = inner.find_first_of(":-=");
    name = inner.substr(0, op);
    if (op != std::string_view::npos) {
      std::string_view rest = inner.substr(op);
      if (rest.rfind(":-", 0) == 0 || rest.rfind(":=", 0) == 0) {
        fallback = rest.substr(2);
        has_default = true;
      } else if (rest[0] == '-' || rest[0] == '=') {
        fallback = rest.substr(1);
        has_default = true;
      } else {
        name = {};
      }
    }
  }
  if (!IsShellVariableName(name))
    return SourceValue::Computed("the shell expression " + QuoteSource(word));
  if (has_default && fallback.find('$') == std::string_view::npos) {
    return SourceValue::Literal(std::string(fallback), span);  // the literal default
  }
  auto it = variables_.find(std::string(name));
  if (it != variables_.end()) return it->second.value;
  return SourceValue::Computed("variable " + QuoteSource(name) + ", set outside this file");
}

void ShellVariables::Open(bool is_case) { branches_.push_back({next_serial_++, is_case}); }

void ShellVariables::Switch() {
  if (branches_.empty()) return;
  EndBranch();
  branches_.back().serial = next_serial_++;
}

void ShellVariables::Close() {
  if (branches_.empty()) return;
  EndBranch();
  branches_.pop_back();
}

void ShellVariables::EndBranch() {
  size_t serial = branches_.back().serial;
  size_t parent = branches_.size() > 1 ? branches_[branches_.size() - 2].serial : 0;
  std::vector<Assigned> moved;
  while (!assigned_.empty() && assigned_.back().serial == serial) {
    Assigned entry = std::move(assigned_.back());
    assigned_.pop_back();
    Variable& var = variables_[entry.name];
    if (!SameLiteral(var.value, entry.before)) {
      var.value = SourceValue::Computed("variable " + QuoteSource(entry.name) +
                                        ", assigned in a conditional branch");
    } else if (var.value.at.empty() || entry.before.at.empty()) {
      var.value.at.clear();  // written in a place not known: --fix would leave it
    } else {
      var.value.at.insert(var.value.at.end(), entry.before.at.begin(), entry.before.at.end());
    }
    var.serial = parent;
    if (parent != 0 && entry.previous != parent) {  // the parent holds it from now on
      entry.serial = parent;
      moved.push_back(std::move(entry));
    }
  }
  for (Assigned& entry : moved) assigned_.push_back(std::move(entry));
}

}  // namespace hubwatch::audit
