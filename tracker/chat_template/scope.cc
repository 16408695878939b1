#include "tracker/chat_template/scope.h"

namespace hubwatch::chat_template {

const Value* Scope::FindOwn(std::string_view name) const {
  for (const auto& [key, value] : variables) {
    if (key == name) return &value;
  }
  return nullptr;
}

Value Scope::Lookup(std::string_view name) const {
  for (const Scope* scope = this; scope != nullptr; scope = scope->parent.get()) {
    if (const Value* value = scope->FindOwn(name)) return *value;
  }
  return Value();
}

void Scope::Set(std::string_view name, Value value) {
  for (auto& [key, existing] : variables) {
    if (key == name) {
      existing = std::move(value);
      return;
    }
  }
  variables.emplace_back(std::string(name), std::move(value));
}

}  // namespace hubwatch::chat_template
