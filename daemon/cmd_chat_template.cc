// hubwatch chat-template render --template FILE --conversation FILE.json [--add-generation-prompt]
//
// Prints exactly the rendered prompt on stdout (no trailing newline is added). Errors are one
// line on stderr and exit status 2.

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>

#include "daemon/commands.h"
#include "estimator/base/clock.h"
#include "estimator/base/json_nesting.h"
#include "estimator/base/result.h"
#include "nlohmann/json.hpp"
#include "tracker/chat_template/template.h"
#include "tracker/chat_template/tokenizer_config.h"

namespace hubwatch::cli {
namespace {

constexpr const char* kUsage =
    "usage: hubwatch chat-template render --template FILE --conversation FILE.json\n"
    "                                     [--add-generation-prompt]\n"
    "\n"
    "Renders a Hugging Face chat template on a conversation and prints exactly the prompt,\n"
    "as the Hub's own implementation (@huggingface/jinja) renders it.\n"
    "\n"
    "  --template FILE           a .jinja file, or a tokenizer_config.json (its chat_template;\n"
    "                            its special tokens such as bos_token are defaults)\n"
    "  --conversation FILE.json  a JSON object whose keys become template variables:\n"
    "                            messages, and optionally tools, documents, bos_token,\n"
    "                            eos_token, add_generation_prompt, anything else\n"
    "  --add-generation-prompt   set add_generation_prompt to true\n"
    "  --help                    show this help\n"
    "\n"
    "strftime_now() formats the local time. Exit status: 0 rendered, 2 bad input or a template\n"
    "error (the message names the construct, its line and column).\n";

// The user's files: a missing one, or a directory, is bad input (exit 2).
Result<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Error::InvalidInput(path + ": is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::InvalidInput(path + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error::Io(path + ": read error");
  return buffer.str();
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<nlohmann::ordered_json> ReadJson(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.error();
  if (JsonNestsDeeperThan(*text)) {
    return Error::InvalidInput(path + ": not valid JSON (nested deeper than " +
                               std::to_string(kMaxJsonNesting) + " levels)");
  }
  nlohmann::ordered_json json =
      nlohmann::ordered_json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Error::InvalidInput(path + ": not valid JSON");
  return json;
}

Result<chat_template::TemplateRevision> LoadTemplate(const std::string& path) {
  if (EndsWith(path, ".json")) {
    Result<nlohmann::ordered_json> config = ReadJson(path);
    if (!config.ok()) return config.error();
    Result<chat_template::TemplateRevision> revision =
        chat_template::TemplateFromTokenizerConfig(*config);
    if (!revision.ok()) return Error{revision.error().code, path + ": " + revision.error().message};
    return revision;
  }
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.error();
  chat_template::TemplateRevision revision;
  revision.source = std::move(text).value();
  return revision;
}

chat_template::CivilTime LocalNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(SystemClock().WallNow());
  std::tm local{};
  localtime_r(&now, &local);
  return {local.tm_year + 1900, local.tm_mon + 1, local.tm_mday,
          local.tm_hour,        local.tm_min,     local.tm_sec};
}

int Render(const std::string& template_path, const std::string& conversation_path,
           bool add_generation_prompt, std::ostream& out, std::ostream& err) {
  const auto fail = [&](const std::string& message) {
    err << "hubwatch chat-template: " << message << "\n";
    return 2;
  };
  Result<chat_template::TemplateRevision> revision = LoadTemplate(template_path);
  if (!revision.ok()) return fail(revision.error().message);
  Result<nlohmann::ordered_json> conversation = ReadJson(conversation_path);
  if (!conversation.ok()) return fail(conversation.error().message);
  if (!conversation->is_object()) return fail(conversation_path + ": must be a JSON object");
  if (add_generation_prompt) (*conversation)["add_generation_prompt"] = true;

  const chat_template::Variables variables = chat_template::OverlayVariables(
      revision->special_tokens, chat_template::VariablesFromJson(*conversation));
  Result<chat_template::Template> parsed = chat_template::Template::Parse(revision->source);
  if (!parsed.ok()) return fail(template_path + ": " + parsed.error().message);
  chat_template::RenderOptions options;
  options.now = LocalNow();
  Result<std::string> prompt = parsed->Render(variables, options);
  if (!prompt.ok()) return fail(template_path + ": " + prompt.error().message);
  out << *prompt;
  out.flush();
  return 0;
}

}  // namespace

int RunChatTemplate(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    err << kUsage;
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h") {
    out << kUsage;
    return 0;
  }
  if (args[0] != "render") {
    err << "hubwatch chat-template: unknown subcommand '" << args[0] << "' (see --help)\n";
    return 2;
  }
  std::string template_path;
  std::string conversation_path;
  bool add_generation_prompt = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      out << kUsage;
      return 0;
    }
    if (arg == "--add-generation-prompt") {
      add_generation_prompt = true;
    } else if ((arg == "--template" || arg == "--conversation") && i + 1 < args.size()) {
      (arg == "--template" ? template_path : conversation_path) = args[++i];
    } else {
      err << "hubwatch chat-template: unexpected argument '" << arg << "' (see --help)\n";
      return 2;
    }
  }
  if (template_path.empty() || conversation_path.empty()) {
    err << "hubwatch chat-template: render needs --template FILE and --conversation FILE.json\n";
    return 2;
  }
  return Render(template_path, conversation_path, add_generation_prompt, out, err);
}

}  // namespace hubwatch::cli
