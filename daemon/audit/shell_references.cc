#include "daemon/audit/shell_references.h"

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/model_flags.h"
#include "daemon/audit/shell_variables.h"
#include "daemon/audit/shell_words.h"

namespace hubwatch::audit {
namespace {

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

// Where a word is written, for --fix (it holds the literal somewhere inside).
SourceSpan SpanOf(const ShellWord& w) {
  return {.line = w.line, .column = w.column, .length = w.length};
}

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// One word of comma-separated key=value pairs (lm-evaluation-harness's --model_args): the
// `pretrained=` model and the `revision=` it is pinned to, views into `args`.
struct KeyValues {
  std::string_view model;
  std::string_view revision;
  bool has_model = false;
  bool has_revision = false;
};

KeyValues ParseKeyValues(std::string_view args) {
  KeyValues kv;
  while (!args.empty()) {
    size_t comma = args.find(',');
    std::string_view item = args.substr(0, comma);
    args = comma == std::string_view::npos ? std::string_view() : args.substr(comma + 1);
    if (item.rfind("pretrained=", 0) == 0) {
      kv.model = item.substr(11);
      kv.has_model = true;
    } else if (item.rfind("revision=", 0) == 0) {
      kv.revision = item.substr(9);
      kv.has_revision = true;
    }
  }
  return kv;
}

class ShellScanner {
 public:
  ShellScanner(std::string_view file, std::string_view text)
      : commands_(SplitShellCommands(text)), out_(file) {}

  FileFindings Run() {
    for (ShellCommand& command : commands_) {
      Normalise(command);
      variables_.ReadKeywords(command);
      if (command.empty()) continue;
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
    if (command.size() >= i + 2 && IsShellVariableName(command[i].text) &&
        (command[i + 1].text == "=" || command[i + 1].text == ":=" || command[i + 1].text == "?=" ||
         command[i + 1].text == "::=")) {  // make: NAME = value
      if (command.size() > i + 2) {
        Assign(command[i].text, command[i + 2].text, SpanOf(command[i + 2]));
      } else {
        Assign(command[i].text, "", {});
      }
      return command.size();
    }
    if (docker_env && command.size() == i + 2 && IsShellVariableName(command[i].text)) {
      Assign(command[i].text, command[i + 1].text, SpanOf(command[i + 1]));  // ENV NAME value
      return command.size();
    }
    for (; i < command.size(); ++i) {
      const std::string& w = command[i].text;
      size_t eq = w.find('=');
      if (eq == std::string::npos || eq == 0) break;
      std::string_view name(w.data(), eq);
      if (name.back() == ':' || name.back() == '?') name.remove_suffix(1);
      if (!IsShellVariableName(name)) break;
      Assign(name, std::string_view(w).substr(eq + 1), SpanOf(command[i]));
    }
    return i;
  }

  void Assign(std::string_view name, std::string_view value, SourceSpan span) {
    variables_.Assign(name, value, span);
  }

  SourceValue Value(std::string_view word) const { return variables_.Value(word); }

  // The value of `--flag V` or `--flag=V` (or a namespaced `--ns.flag`) in command[from...];
  // index of its word in *at. *next, when given, is set to the index after the match.
  const ShellWord* Flag(const ShellCommand& c, size_t from, std::string_view flag,
                        std::string* value, size_t* next = nullptr) const {
    for (size_t i = from; i < c.size(); ++i) {
      bool inline_value = false;
      if (!MatchFlag(c[i].text, flag, &inline_value, value)) continue;
      if (inline_value) {
        if (next != nullptr) *next = i + 1;
        return &c[i];
      }
      if (i + 1 < c.size()) {
        *value = c[i + 1].text;
        if (next != nullptr) *next = i + 2;
        return &c[i + 1];
      }
    }
    return nullptr;
  }

  template <size_t N>
  SourceValue FirstFlag(const ShellCommand& c, size_t from,
                        const std::array<std::string_view, N>& flags) const {
    std::string value;
    for (std::string_view f : flags) {
      if (const ShellWord* at = Flag(c, from, f, &value)) {
        return variables_.Value(value, SpanOf(*at));
      }
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
    // TEI's router (text-embeddings-router, and the -75/-80/... builds of its images) takes
    // TGI's launcher flags and, without --model-id, reads MODEL_ID too.
    bool tei = program.rfind("text-embeddings-router", 0) == 0;
    bool tgi = program == "text-generation-launcher" || tei;
    for (const ShellWord& w : c)
      tgi = tgi || w.text.find("text-generation-inference:") != std::string::npos;
    std::string_view recognised = api_server ? "shell:vllm-api-server"
                                  : tei      ? "shell:text-embeddings-router"
                                  : tgi      ? "shell:text-generation-launcher"
                                             : "shell:model-flag";
    IdContext context = api_server || tgi ? IdContext::kModelOnly : IdContext::kOrgNameOnly;
    bool found = false;
    for (std::string_view flag : kModelFlags) {
      std::string model;
      for (size_t from = p + 1; const ShellWord* at = Flag(c, from, flag, &model, &from);) {
        found = true;
        bool tokenizer = flag.find("tokenizer") != std::string_view::npos;
        SourceValue rev = tokenizer ? FirstFlag(c, p + 1, kTokenizerRevisionFlags) : revision;
        Report(recognised, *at, model, rev, context);
      }
    }
    found = ModelArgs(c, p, program) || found;
    if (!found && (program == "text-generation-launcher" || tei)) {  // it reads MODEL_ID instead
      out_.Add(recognised, c[p].line, c[p].column, Value("$MODEL_ID"), revision, context);
    }
  }

  // lm-evaluation-harness: `--model_args pretrained=ORG/NAME,revision=R,...`. Returns whether it
  // named a model.
  bool ModelArgs(const ShellCommand& c, size_t p, std::string_view program) {
    std::string args;
    const ShellWord* at = Flag(c, p + 1, "--model_args", &args);
    if (at == nullptr) at = Flag(c, p + 1, "--model-args", &args);
    KeyValues kv = ParseKeyValues(args);
    if (at == nullptr || !kv.has_model) return false;
    bool lm_eval = program == "lm_eval" || program == "lm-eval";
    Report("shell:lm-eval-model-args", *at, kv.model,
           kv.has_revision ? variables_.Value(kv.revision, SpanOf(*at)) : SourceValue::Absent(),
           lm_eval ? IdContext::kModelOnly : IdContext::kOrgNameOnly);
    return true;
  }

  void Tokenizer(const ShellCommand& c, size_t p, std::string_view recognised) {
    std::string value;
    const ShellWord* at = Flag(c, p + 1, "--tokenizer", &value);
    if (at == nullptr) return;
    Report(recognised, *at, value, FirstFlag(c, p + 1, kTokenizerRevisionFlags),
           IdContext::kModelOnly);
  }

  std::vector<ShellCommand> commands_;
  ShellVariables variables_;
  FindingsBuilder out_;
};

}  // namespace

FileFindings FindShellReferences(std::string_view file, std::string_view text) {
  return ShellScanner(file, text).Run();
}

}  // namespace hubwatch::audit
