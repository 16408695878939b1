#pragma once

// What a {% for target in iterable [if test] %} loop iterates, as opposed to what it renders:
// the items it visits, how each binds to the loop target, and the `loop` variable of each
// iteration. The Interpreter renders the body for each item and handles break / continue and
// the {% else %} block.
//
// The functions borrow the render's ExpressionEvaluator and RenderState for the call; errors
// are recorded in the RenderState (the first one sticks). One render, one thread: not
// thread-safe.

#include <cstddef>
#include <optional>

#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/expression_evaluator.h"
#include "tracker/chat_template/render_state.h"
#include "tracker/chat_template/scope.h"
#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

// The items the loop `node` (a kFor) visits, in order: the iterable's elements (an object's
// keys), evaluated in `loop_scope`, each checked against a tuple target's shape and kept only
// when the inline `if` test holds for it (the test counts as an iteration). nullopt when the
// loop must not run at all, not even its {% else %}: the render failed or halted.
std::optional<Array> SelectLoopItems(const Node& node, const ScopePtr& loop_scope,
                                     ExpressionEvaluator& evaluator, RenderState& state);

// Binds `item` to the loop target in `into`: a name takes the item, a tuple of names takes its
// elements (REQUIRES: then item is an array of the tuple's length, as SelectLoopItems checks).
// Fails the render when a tuple holds anything but names.
void BindLoopTarget(const Node& target, const Value& item, Scope& into, RenderState& state);

// The `loop` variable of iteration i (0-based) over items: index, index0, revindex, revindex0,
// first, last, length, previtem, nextitem.
Value LoopVariable(const Array& items, size_t i);

}  // namespace hubwatch::chat_template
