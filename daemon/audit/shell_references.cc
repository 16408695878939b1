#include "daemon/audit/shell_references.h"

#include <array>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/shell_words.h"

namespace hubwatch::audit {
namespace {

constexpr std::array<std::string_view, 12> kModelFlags = {"--model_name_or_path",
                                                          "--model-name-or-path",
                                                          "--base_model",
                                                          "--base-model",
                                                          "--pretrained_model_name_or_path",
                                                          "--model_id",
                                                          "--model-id",
                                                          "--model",
                                                          "--tokenizer_name",
                                                          "--tokenizer-name",
                                                          "--tokenizer",
                                                          "--model_name"};
constexpr std::array<std::string_view, 4> kRevisionFlags = {
    "--revision", "--model_revision", "--model-revision", "--base_model_revision"};
// hf/huggingface-cli download flags that take a value (so it is not the repo id).
constexpr std::array<std::string_view, 9> kDownloadValueFlags = {
    "--revision",  "--repo-type",   "--local-dir",
    "--cache-dir", "--token",       "--include",
    "--exclude",   "--max-workers", "--local-dir-use-symlinks"};

template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  for (std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

bool IsVariableName(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

class ShellScanner {
 public:
  ShellScanner(std::string_view file, std::string_view text)
      : commands_(SplitShellCommands(text)), out_(file) {}

  FileFindings Run() {
    for (ShellCommand& command : commands_) {
      Normalise(command);
      size_t program = ReadAssignments(command);
      if (program < command.size()) Recognise(command, program);
    }
    return out_.Take();
  }

 private:
  // Dockerfile instructions and exec-form arrays, make's recipe prefixes.
  static void Normalise(ShellCommand& command) {
    std::string_view first = command[0].text;
    if (first == "RUN" || first == "CMD" || first == "ENTRYPOINT") command.erase(command.begin());
    for (ShellWord& w : command) {
      std::string& t = w.text;
      if (!t.empty() && t.front() == '[') t.erase(0, 1);
      if (!t.empty() && (t.back() == ',' || t.back() == ']')) t.pop_back();
    }
    while (!command.empty() && !command[0].text.empty() &&
           (command[0].text[0] == '@' || command[0].text[0] == '-') &&
           command[0].text.rfind("--", 0) != 0) {
      command[0].text.erase(0, 1);
      if (command[0].text.empty()) command.erase(command.begin());
    }
  }

  // Reads the command's leading assignments (NAME=v, export/ENV/ARG NAME=v, NAME := v, ENV NAME
  // v); returns the index of its program word.
  size_t ReadAssignments(const ShellCommand& command) {
    size_t i = 0;
    std::string_view first = command.empty() ? "" : std::string_view(command[0].text);
    bool docker_env = first == "ENV" || first == "ARG";
    if (first == "export" || first == "local" || first == "readonly" || first == "declare" ||
        first == "override" || docker_env) {
      ++i;
    }
    if (command.size() >= i + 2 && IsVariableName(command[i].text) &&
        (command[i + 1].text == "=" || command[i + 1].text == ":=" || command[i + 1].text == "?=" ||
         command[i + 1].text == "::=")) {  // make: NAME = value
      Assign(command[i].text, command.size() > i + 2 ? command[i + 2].text : "");
      return command.size();
    }
    if (docker_env && command.size() == i + 2 && IsVariableName(command[i].text)) {
      Assign(command[i].text, command[i + 1].text);  // ENV NAME value
      return command.size();
    }
    for (; i < command.size(); ++i) {
      const std::string& w = command[i].text;
      size_t eq = w.find('=');
      if (eq == std::string::npos || eq == 0) break;
      std::string_view name(w.data(), eq);
      if (name.back() == ':' || name.back() == '?') name.remove_suffix(1);
      if (!IsVariableName(name)) break;
      Assign(name, std::string_view(w).substr(eq + 1));
    }
    return i;
  }

  void Assign(std::string_view name, std::string_view value) {
    variables_[std::string(name)] = Value(value);
  }

  // What a word holds: a literal, a literal default (${X:-v}), a variable's value, or why not.
  SourceValue Value(std::string_view word) const {
    if (word.find('$') == std::string_view::npos) return SourceValue::Literal(std::string(word));
    std::string_view name;
    std::string_view fallback;
    bool has_default = false;
    if (word.size() > 1 && word[0] == '$' && IsVariableName(word.substr(1))) {
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
    if (!IsVariableName(name))
      return SourceValue::Computed("the shell expression " + QuoteSource(word));
    if (has_default && fallback.find('$') == std::string_view::npos) {
      return SourceValue::Literal(std::string(fallback));  // the literal default
    }
    auto it = variables_.find(std::string(name));
    if (it != variables_.end()) return it->second;
    return SourceValue::Computed("variable " + QuoteSource(name) + ", set outside this file");
  }

  // The value of `--flag V` or `--flag=V` in command[from...]; index of its word in *at.
  const ShellWord* Flag(const ShellCommand& c, size_t from, std::string_view flag,
                        std::string* value) const {
    for (size_t i = from; i < c.size(); ++i) {
      std::string_view w = c[i].text;
      if (w == flag && i + 1 < c.size()) {
        *value = c[i + 1].text;
        return &c[i + 1];
      }
      if (w.size() > flag.size() && w.substr(0, flag.size()) == flag && w[flag.size()] == '=') {
        *value = std::string(w.substr(flag.size() + 1));
        return &c[i];
      }
    }
    return nullptr;
  }

  template <size_t N>
  SourceValue FirstFlag(const ShellCommand& c, size_t from,
                        const std::array<std::string_view, N>& flags) const {
    std::string value;
    for (std::string_view f : flags) {
      if (Flag(c, from, f, &value) != nullptr) return Value(value);
    }
    return SourceValue::Absent();
  }

  void Report(std::string_view recognised_by, const ShellWord& at, std::string_view word,
              const SourceValue& revision, IdContext context) {
    out_.Add(recognised_by, at.line, at.column, Value(word), revision, context);
  }

  void Recognise(const ShellCommand& c, size_t p) {
    std::string_view program = Basename(c[p].text);
    for (std::string_view wrapper : {"sudo", "exec", "nohup", "time", "env", "uv", "poetry"}) {
      if (program == wrapper && p + 1 < c.size()) {
        size_t next = p + 1;
        if ((program == "uv" || program == "poetry") && c[next].text == "run") ++next;
        while (next < c.size() && c[next].text.find('=') != std::string::npos) ++next;
        if (next < c.size()) Recognise(c, next);
        return;
      }
    }
    SourceValue revision = FirstFlag(c, p + 1, kRevisionFlags);
    if ((program == "huggingface-cli" || program == "hf") && p + 1 < c.size() &&
        c[p + 1].text == "download") {
      std::string type;
      if (Flag(c, p + 2, "--repo-type", &type) != nullptr && type != "model") return;
      for (size_t i = p + 2; i < c.size(); ++i) {
        if (OneOf(c[i].text, kDownloadValueFlags)) {
          ++i;
        } else if (c[i].text.rfind('-', 0) != 0) {
          Report(program == "hf" ? "shell:hf-download" : "shell:huggingface-cli-download", c[i],
                 c[i].text, revision, IdContext::kModelOnly);
          return;
        }
      }
      return;
    }
    if (program == "vllm" && p + 1 < c.size() && c[p + 1].text == "serve") {
      std::string model;
      const ShellWord* at = p + 2 < c.size() && c[p + 2].text.rfind('-', 0) != 0
                                ? &c[p + 2]
                                : Flag(c, p + 2, "--model", &model);
      if (at != nullptr) {
        Report("shell:vllm-serve", *at, model.empty() ? at->text : model, revision,
               IdContext::kModelOnly);
      }
      Tokenizer(c, p, "shell:vllm-serve");
      return;
    }
    bool api_server = false;
    for (size_t i = p; i + 1 < c.size(); ++i) {
      api_server =
          api_server || (c[i].text == "-m" && c[i + 1].text.rfind("vllm.entrypoints", 0) == 0);
    }
    bool tgi = program == "text-generation-launcher";
    for (const ShellWord& w : c)
      tgi = tgi || w.text.find("text-generation-inference:") != std::string::npos;
    std::string_view recognised = api_server ? "shell:vllm-api-server"
                                  : tgi      ? "shell:text-generation-launcher"
                                             : "shell:model-flag";
    IdContext context = api_server || tgi ? IdContext::kModelOnly : IdContext::kOrgNameOnly;
    bool found = false;
    for (std::string_view flag : kModelFlags) {
      std::string model;
      const ShellWord* at = Flag(c, p + 1, flag, &model);
      if (at == nullptr) continue;
      found = true;
      bool tokenizer = flag.find("tokenizer") != std::string_view::npos;
      SourceValue rev = tokenizer ? FirstFlag(c, p + 1,
                                              std::array<std::string_view, 2>{
                                                  "--tokenizer-revision", "--tokenizer_revision"})
                                  : revision;
      Report(recognised, *at, model, rev, context);
    }
    if (!found && program == "text-generation-launcher") {  // it reads MODEL_ID instead
      out_.Add(recognised, c[p].line, c[p].column, Value("$MODEL_ID"), revision, context);
    }
  }

  void Tokenizer(const ShellCommand& c, size_t p, std::string_view recognised) {
    std::string value;
    const ShellWord* at = Flag(c, p + 1, "--tokenizer", &value);
    if (at == nullptr) return;
    Report(
        recognised, *at, value,
        FirstFlag(c, p + 1,
                  std::array<std::string_view, 2>{"--tokenizer-revision", "--tokenizer_revision"}),
        IdContext::kModelOnly);
  }

  std::vector<ShellCommand> commands_;
  std::unordered_map<std::string, SourceValue> variables_;
  FindingsBuilder out_;
};

}  // namespace

FileFindings FindShellReferences(std::string_view file, std::string_view text) {
  return ShellScanner(file, text).Run();
}

}  // namespace hubwatch::audit
