#include "tracker/chat_template/template.h"

#include "tracker/chat_template/interpreter.h"
#include "tracker/chat_template/json_value.h"
#include "tracker/chat_template/lexer.h"
#include "tracker/chat_template/parser.h"

namespace hubwatch::chat_template {

struct Program {
  std::string source;
  std::vector<NodePtr> body;
};

Variables VariablesFromJson(const nlohmann::ordered_json& object) {
  Variables variables;
  variables.reserve(object.size());
  for (const auto& [key, value] : object.items()) variables.emplace_back(key, FromJson(value));
  return variables;
}

Variables OverlayVariables(const Variables& defaults, const Variables& overrides) {
  Variables merged = defaults;
  for (const auto& [name, value] : overrides) {
    bool replaced = false;
    for (auto& [existing_name, existing] : merged) {
      if (existing_name == name) {
        existing = value;
        replaced = true;
        break;
      }
    }
    if (!replaced) merged.emplace_back(name, value);
  }
  return merged;
}

Result<Template> Template::Parse(std::string_view source, const Limits& limits) {
  Result<std::vector<Token>> tokens = Tokenize(source);
  if (!tokens.ok()) return tokens.error();
  Result<std::vector<NodePtr>> body = chat_template::Parse(*tokens, limits.max_nesting);
  if (!body.ok()) return body.error();
  auto program = std::make_shared<Program>();
  program->source.assign(source);
  program->body = std::move(body).value();
  return Template(std::move(program));
}

Result<std::string> Template::Render(const Variables& variables,
                                     const RenderOptions& options) const {
  auto globals = std::make_shared<Scope>();
  DefineGlobals(*globals);
  for (const auto& [name, value] : variables) {
    if (globals->FindOwn(name) != nullptr) {
      return Error::InvalidInput("variable '" + name + "' is already declared (it is a global)");
    }
    globals->Set(name, value);
  }
  Interpreter interpreter(options, std::move(globals));
  return interpreter.Render(program_->body);
}

const std::string& Template::source() const { return program_->source; }

}  // namespace hubwatch::chat_template
