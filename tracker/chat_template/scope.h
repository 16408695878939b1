#pragma once

// Variable scopes of a render: the globals, a for loop body, a macro call.
//
// Ownership: scopes are shared (ScopePtr) because a macro keeps the scope it was defined in;
// RenderState tracks every scope a render creates and empties them when the render ends, which
// frees any reference cycles among scopes and macros. Not thread-safe: a scope belongs to one
// render.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

struct Scope {
  explicit Scope(std::shared_ptr<Scope> parent_scope = nullptr) : parent(std::move(parent_scope)) {}

  // This scope's own variable, or null.
  const Value* FindOwn(std::string_view name) const;
  // Looks the name up through the parents; undefined when not found.
  Value Lookup(std::string_view name) const;
  void Set(std::string_view name, Value value);

  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> variables;
  bool is_call_block = false;  // the scope a {% call %} block passes to its macro
};
using ScopePtr = std::shared_ptr<Scope>;

}  // namespace hubwatch::chat_template
