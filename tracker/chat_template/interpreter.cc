#include "tracker/chat_template/interpreter.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "tracker/chat_template/text.h"

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

namespace {

std::string Located(SourcePos pos, std::string_view message) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": " +
         std::string(message);
}

// Which of caller / kwargs / varargs a macro (or call block) body reads before declaring them,
// following the reference's walk over the body.
struct SpecialArguments {
  bool caller = false;
  bool kwargs = false;
  bool varargs = false;
};

class SpecialArgumentScan {
 public:
  SpecialArguments Run(const std::vector<NodePtr>& parameters, const std::vector<NodePtr>& body) {
    for (const NodePtr& p : parameters) Declare(p->text);
    Visit(body);
    return accessed_;
  }

 private:
  static bool IsSpecial(std::string_view name) {
    return name == "caller" || name == "kwargs" || name == "varargs";
  }
  void Declare(std::string_view name) {
    if (IsSpecial(name)) declared_.insert(std::string(name));
  }
  void DeclareTarget(const Node* target) {
    if (!target) return;
    if (target->kind == NodeKind::kIdentifier) Declare(target->text);
    if (target->kind == NodeKind::kTupleLiteral) {
      for (const NodePtr& item : target->items) DeclareTarget(item.get());
    }
  }
  void VisitDefaults(const std::vector<NodePtr>& parameters) {
    for (const NodePtr& p : parameters) {
      if (p->kind == NodeKind::kKeywordArgument) Visit(p->a.get());
    }
  }
  void VisitFilter(const Node* filter) {
    if (filter && filter->kind == NodeKind::kCall) Visit(filter->items);
  }
  void Visit(const std::vector<NodePtr>& nodes) {
    for (const NodePtr& n : nodes) Visit(n.get());
  }
  void Visit(const Node* node) {
    if (!node) return;
    switch (node->kind) {
      case NodeKind::kFor:
        DeclareTarget(node->a.get());
        if (node->b && node->b->kind == NodeKind::kSelect) {
          Visit(node->b->a.get());
          Visit(node->body);
          Visit(node->alternate);
          Visit(node->b->b.get());
        } else {
          Visit(node->b.get());
          Visit(node->body);
          Visit(node->alternate);
        }
        return;
      case NodeKind::kSet:
        DeclareTarget(node->a.get());
        Visit(node->b.get());
        Visit(node->body);
        return;
      case NodeKind::kMacro:
        for (const NodePtr& p : node->items) Declare(p->text);
        VisitDefaults(node->items);
        Visit(node->body);
        return;
      case NodeKind::kCallBlock:
        Visit(node->a.get());
        for (const NodePtr& p : node->items) Declare(p->text);
        VisitDefaults(node->items);
        Visit(node->body);
        return;
      case NodeKind::kFilterBlock:
        Visit(node->body);
        VisitFilter(node->a.get());
        return;
      case NodeKind::kIdentifier:
        if (IsSpecial(node->text) && declared_.count(node->text) == 0) {
          if (node->text == "caller") accessed_.caller = true;
          if (node->text == "kwargs") accessed_.kwargs = true;
          if (node->text == "varargs") accessed_.varargs = true;
        }
        return;
      case NodeKind::kMember:
        Visit(node->a.get());
        if (node->flag) Visit(node->b.get());
        return;
      case NodeKind::kFilter:
        Visit(node->a.get());
        VisitFilter(node->b.get());
        return;
      case NodeKind::kTest:
        Visit(node->a.get());
        return;
      case NodeKind::kSelect:
        Visit(node->b.get());
        Visit(node->a.get());
        return;
      case NodeKind::kKeywordArgument:
        Visit(node->a.get());
        return;
      default:
        Visit(node->a.get());
        Visit(node->b.get());
        Visit(node->c.get());
        Visit(node->items);
        Visit(node->body);
        Visit(node->alternate);
        return;
    }
  }

  std::set<std::string> declared_;
  SpecialArguments accessed_;
};

// Binds call arguments to a macro's (or call block's) parameters, as the reference does:
// positional first, then keywords; defaults are evaluated last, in the macro's scope.
void BindArguments(Interpreter& in, std::string_view display_name,
                   const std::vector<NodePtr>& parameters, const SpecialArguments& special,
                   std::vector<Value>& args, const ScopePtr& scope, SourcePos at) {
  Object keywords;
  size_t positional_count = args.size();
  if (!args.empty() && args.back().is(ValueKind::kKeywordArguments)) {
    keywords = args.back().object();
    --positional_count;
  }
  std::vector<const Node*> pending_defaults;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Node& parameter = *parameters[i];
    const std::string& name = parameter.text;
    bool provided = i < positional_count;
    Value value = provided ? args[i] : Value();
    if (!provided) {
      if (const Value* keyword = keywords.Find(name)) {
        value = *keyword;
        keywords.Erase(name);
        provided = true;
      }
    }
    if (!provided && parameter.kind == NodeKind::kKeywordArgument) {
      pending_defaults.push_back(&parameter);
    }
    scope->Set(name, std::move(value));
  }
  if (special.kwargs) {
    scope->Set("kwargs", Value::MakeObject(keywords));
  } else if (keywords.size() > 0) {
    in.Fail(at, "macro " + std::string(display_name) + " takes no keyword argument '" +
                    keywords.entries().front().first + "'");
    return;
  }
  if (special.varargs) {
    Array rest;
    for (size_t i = parameters.size(); i < positional_count; ++i) rest.push_back(args[i]);
    scope->Set("varargs", Value::MakeArray(std::move(rest)));
  } else if (positional_count > parameters.size()) {
    in.Fail(at, "macro " + std::string(display_name) + " takes not more than " +
                    std::to_string(parameters.size()) + " argument(s)");
    return;
  }
  for (const Node* parameter : pending_defaults) {
    Value value = in.Evaluate(*parameter->a, scope);
    if (in.failed()) return;
    scope->Set(parameter->text, std::move(value));
  }
}

class MacroFunction : public Function {
 public:
  MacroFunction(const Node& node, ScopePtr scope)
      : node_(node),
        scope_(std::move(scope)),
        special_(SpecialArgumentScan().Run(node.items, node.body)) {}

  Value Call(Interpreter& in, std::vector<Value>& args, const ScopePtr& call_scope,
             SourcePos at) const override {
    if (!in.EnterCall(at)) return Value();
    ScopePtr parent = scope_;
    if (special_.caller) {
      const Value* caller =
          call_scope && call_scope->is_call_block ? call_scope->FindOwn("caller") : nullptr;
      parent = in.MakeScope(scope_);
      parent->Set("caller", caller ? *caller : Value());
    }
    auto macro_scope = in.MakeScope(parent);
    BindArguments(in, "'" + node_.text + "'", node_.items, special_, args, macro_scope, at);
    Value result =
        in.failed() ? Value() : Value::String(in.RenderToString(node_.body, macro_scope));
    in.LeaveCall();
    return result;
  }

 private:
  const Node& node_;
  ScopePtr scope_;
  SpecialArguments special_;
};

// The `caller` of a {% call %} block: renders the block's body.
class CallerFunction : public Function {
 public:
  CallerFunction(const Node& node, ScopePtr scope)
      : node_(node),
        scope_(std::move(scope)),
        special_(SpecialArgumentScan().Run(node.items, node.body)) {}

  Value Call(Interpreter& in, std::vector<Value>& args, const ScopePtr&,
             SourcePos at) const override {
    if (!in.EnterCall(at)) return Value();
    auto scope = in.MakeScope(scope_);
    BindArguments(in, "None", node_.items, special_, args, scope, at);
    Value result = in.failed() ? Value() : Value::String(in.RenderToString(node_.body, scope));
    in.LeaveCall();
    return result;
  }

 private:
  const Node& node_;
  ScopePtr scope_;
  SpecialArguments special_;
};

std::string DescribeCallee(const Node& callee) {
  if (callee.kind == NodeKind::kIdentifier) return "'" + callee.text + "'";
  if (callee.kind == NodeKind::kMember && !callee.flag && callee.b->kind == NodeKind::kIdentifier) {
    return "method '" + callee.b->text + "'";
  }
  return "expression";
}

bool IsNumericLike(const Value& v) { return v.is_number() || v.is(ValueKind::kBoolean); }

Value NumberResult(double value, bool is_float) {
  return is_float ? Value::Float(value) : Value::Integer(value);
}

}  // namespace

Interpreter::Interpreter(const RenderOptions& options, ScopePtr globals)
    : options_(options), globals_(std::move(globals)) {
  scopes_.push_back(globals_);
}

Interpreter::~Interpreter() {
  // Macros keep the scope they were defined in, and scopes and namespaces may hold macros and
  // namespaces, so a render can leave reference cycles; values never outlive the render, so
  // emptying every scope and namespace it created frees them all.
  for (const std::weak_ptr<Scope>& weak : scopes_) {
    if (ScopePtr scope = weak.lock()) {
      scope->variables.clear();
      scope->parent.reset();
    }
  }
  for (const std::weak_ptr<Object>& weak : namespaces_) {
    if (std::shared_ptr<Object> object = weak.lock()) object->Clear();
  }
}

ScopePtr Interpreter::MakeScope(ScopePtr parent) {
  auto scope = std::make_shared<Scope>(std::move(parent));
  Track(scopes_, scope);
  return scope;
}

void Interpreter::TrackNamespace(const Value& ns) { Track(namespaces_, ns.shared_namespace()); }

Value Interpreter::Fail(SourcePos pos, std::string message, ErrorCode code) {
  if (!error_) error_ = Error{code, Located(pos, message)};
  return Value();
}

bool Interpreter::CheckSize(size_t size, SourcePos pos) {
  if (size <= options_.limits.max_output_bytes) return true;
  Fail(pos,
       "output or value exceeds the limit of " + std::to_string(options_.limits.max_output_bytes) +
           " bytes",
       ErrorCode::kOverflow);
  return false;
}

bool Interpreter::CountIterations(size_t n, SourcePos pos) {
  iterations_ += static_cast<int64_t>(n);
  if (iterations_ <= options_.limits.max_loop_iterations) return true;
  Fail(pos,
       "loops exceed the limit of " + std::to_string(options_.limits.max_loop_iterations) +
           " iterations",
       ErrorCode::kOverflow);
  return false;
}

bool Interpreter::EnterCall(SourcePos pos) {
  if (++call_depth_ <= options_.limits.max_call_depth) return true;
  --call_depth_;
  Fail(pos,
       "macro calls nest deeper than " + std::to_string(options_.limits.max_call_depth) + " levels",
       ErrorCode::kOverflow);
  return false;
}

bool Interpreter::Append(std::string& out, std::string_view piece, SourcePos pos) {
  if (!CheckSize(out.size() + piece.size(), pos)) return false;
  out.append(piece);
  return true;
}

Result<std::string> Interpreter::Render(const std::vector<NodePtr>& program) {
  std::string out;
  RenderBlock(program, globals_, out);
  if (!failed() && flow_ != Flow::kNormal) {
    Fail({1, 1},
         flow_ == Flow::kBreak ? "break outside a for loop" : "continue outside a for loop");
  }
  if (failed()) return *error_;
  return out;
}

std::string Interpreter::RenderToString(const std::vector<NodePtr>& body, const ScopePtr& scope) {
  std::string out;
  RenderBlock(body, scope, out);
  return out;
}

void Interpreter::RenderBlock(const std::vector<NodePtr>& body, const ScopePtr& scope,
                              std::string& out) {
  for (const NodePtr& statement : body) {
    if (failed() || flow_ != Flow::kNormal) return;
    RenderStatement(*statement, scope, out);
  }
}

void Interpreter::RenderStatement(const Node& node, const ScopePtr& scope, std::string& out) {
  if (++steps_ > options_.limits.max_steps) {
    Fail(node.pos,
         "evaluation exceeds the limit of " + std::to_string(options_.limits.max_steps) + " steps",
         ErrorCode::kOverflow);
    return;
  }
  Value value;
  switch (node.kind) {
    case NodeKind::kText:
    case NodeKind::kStringLiteral:
      Append(out, node.text, node.pos);
      return;
    case NodeKind::kComment:
      return;
    case NodeKind::kIf: {
      const Value test = Evaluate(*node.a, scope);
      if (failed() || flow_ != Flow::kNormal) return;
      RenderBlock(Truthy(test) ? node.body : node.alternate, scope, out);
      return;
    }
    case NodeKind::kFor:
      RenderFor(node, scope, out);
      return;
    case NodeKind::kSet:
      ExecuteSet(node, scope);
      return;
    case NodeKind::kMacro:
      DefineMacro(node, scope);
      return;
    case NodeKind::kBreak:
      flow_ = Flow::kBreak;
      return;
    case NodeKind::kContinue:
      flow_ = Flow::kContinue;
      return;
    case NodeKind::kCallBlock:
      value = EvaluateCallBlock(node, scope);
      break;
    case NodeKind::kFilterBlock: {
      std::string rendered = RenderToString(node.body, scope);
      if (failed() || flow_ != Flow::kNormal) return;
      value = ApplyFilter(*this, Value::String(std::move(rendered)), *node.a, scope);
      break;
    }
    default:
      value = Evaluate(node, scope);
      break;
  }
  if (failed() || flow_ != Flow::kNormal || value.is_null() || value.is_undefined()) return;
  std::string error;
  const size_t before = out.size();
  if (!ToDisplayString(value, out, &error)) {
    out.resize(before);
    Fail(node.pos, "cannot print the value: " + error);
    return;
  }
  CheckSize(out.size(), node.pos);
}

void Interpreter::RenderFor(const Node& node, const ScopePtr& scope, std::string& out) {
  auto loop_scope = MakeScope(scope);
  const Node* test = nullptr;
  Value iterable;
  if (node.b->kind == NodeKind::kSelect) {
    iterable = Evaluate(*node.b->a, loop_scope);
    test = node.b->b.get();
  } else {
    iterable = Evaluate(*node.b, loop_scope);
  }
  if (failed() || flow_ != Flow::kNormal) return;
  if (!iterable.is_array_like() && !iterable.is_object_like()) {
    Fail(node.b->pos, "for loop: expected an array or an object to iterate, got " +
                          std::string(iterable.TypeName()));
    return;
  }
  if (iterable.is_object_like()) {
    Array keys;
    for (const auto& entry : iterable.object().entries())
      keys.push_back(Value::String(entry.first));
    iterable = Value::MakeArray(std::move(keys));
  }
  const Node& target = *node.a;
  const auto bind = [&](const Value& item, Scope& into) {
    if (target.kind == NodeKind::kIdentifier) {
      into.Set(target.text, item);
      return;
    }
    for (size_t j = 0; j < target.items.size(); ++j) {
      if (target.items[j]->kind != NodeKind::kIdentifier) {
        Fail(target.items[j]->pos, "for loop: can only unpack into names");
        return;
      }
      into.Set(target.items[j]->text, item.array()[j]);
    }
  };
  const Array& candidates = iterable.array();
  Array items;
  if (target.kind == NodeKind::kIdentifier && test == nullptr) {
    items = candidates;
  } else {
    for (const Value& candidate : candidates) {
      if (target.kind == NodeKind::kTupleLiteral) {
        if (!candidate.is(ValueKind::kArray)) {
          Fail(target.pos, "for loop: cannot unpack " + std::string(candidate.TypeName()));
          return;
        }
        const size_t expected = target.items.size();
        const size_t actual = candidate.array().size();
        if (expected != actual) {
          Fail(target.pos, std::string("for loop: too ") + (expected > actual ? "few" : "many") +
                               " items to unpack");
          return;
        }
      }
      if (test != nullptr) {
        if (!CountIterations(1, node.pos)) return;
        auto test_scope = MakeScope(loop_scope);
        bind(candidate, *test_scope);
        const Value keep = Evaluate(*test, test_scope);
        if (failed() || flow_ != Flow::kNormal) return;
        if (!Truthy(keep)) continue;
      }
      items.push_back(candidate);
    }
  }
  bool no_iteration = true;
  std::string iteration;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!CountIterations(1, node.pos)) return;
    const double length = static_cast<double>(items.size());
    const double index = static_cast<double>(i);
    Object loop;
    loop.Set("index", Value::Integer(index + 1));
    loop.Set("index0", Value::Integer(index));
    loop.Set("revindex", Value::Integer(length - index));
    loop.Set("revindex0", Value::Integer(length - index - 1));
    loop.Set("first", Value::Boolean(i == 0));
    loop.Set("last", Value::Boolean(i + 1 == items.size()));
    loop.Set("length", Value::Integer(length));
    loop.Set("previtem", i > 0 ? items[i - 1] : Value());
    loop.Set("nextitem", i + 1 < items.size() ? items[i + 1] : Value());
    loop_scope->Set("loop", Value::MakeObject(std::move(loop)));
    bind(items[i], *loop_scope);
    // The reference renders each iteration on its own and drops it on break / continue.
    iteration.clear();
    RenderBlock(node.body, loop_scope, iteration);
    if (failed()) return;
    if (flow_ == Flow::kContinue) {
      flow_ = Flow::kNormal;
      continue;
    }
    if (flow_ == Flow::kBreak) {
      flow_ = Flow::kNormal;
      break;
    }
    if (!Append(out, iteration, node.pos)) return;
    no_iteration = false;
  }
  if (no_iteration) RenderBlock(node.alternate, loop_scope, out);
}

void Interpreter::ExecuteSet(const Node& node, const ScopePtr& scope) {
  Value value;
  if (node.b) {
    value = Evaluate(*node.b, scope);
  } else {
    value = Value::String(RenderToString(node.body, scope));
  }
  if (failed() || flow_ != Flow::kNormal) return;
  const Node& target = *node.a;
  switch (target.kind) {
    case NodeKind::kIdentifier:
      scope->Set(target.text, std::move(value));
      return;
    case NodeKind::kTupleLiteral: {
      if (!value.is_array_like()) {
        Fail(target.pos, "set: cannot unpack " + std::string(value.TypeName()));
        return;
      }
      const Array& items = value.array();
      if (items.size() != target.items.size()) {
        Fail(target.pos, std::string("set: too ") +
                             (target.items.size() > items.size() ? "few" : "many") +
                             " items to unpack");
        return;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        if (target.items[i]->kind != NodeKind::kIdentifier) {
          Fail(target.items[i]->pos, "set: can only unpack into names");
          return;
        }
        scope->Set(target.items[i]->text, items[i]);
      }
      return;
    }
    case NodeKind::kMember: {
      const Value object = Evaluate(*target.a, scope);
      if (failed()) return;
      if (!object.is(ValueKind::kNamespace)) {
        Fail(target.pos, "set: cannot assign an attribute of " + std::string(object.TypeName()) +
                             " (only of a namespace)");
        return;
      }
      if (target.b->kind != NodeKind::kIdentifier) {
        Fail(target.pos, "set: a namespace attribute must be a name");
        return;
      }
      object.namespace_object().Set(target.b->text, std::move(value));
      return;
    }
    default:
      Fail(target.pos, "set: invalid assignment target");
      return;
  }
}

void Interpreter::DefineMacro(const Node& node, const ScopePtr& scope) {
  scope->Set(node.text, Value::MakeFunction(std::make_shared<MacroFunction>(node, scope)));
}

Value Interpreter::EvaluateCallBlock(const Node& node, const ScopePtr& scope) {
  const Node& call = *node.a;
  auto caller = std::make_shared<CallerFunction>(node, scope);
  Array args;
  Object keywords;
  EvaluateArguments(call.items, scope, args, keywords);
  args.push_back(Value::MakeKeywordArguments(std::move(keywords)));
  const Value callee = Evaluate(*call.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (!callee.is(ValueKind::kFunction)) {
    return Fail(call.pos, "call block: " + DescribeCallee(*call.a) + " is not a macro (got " +
                              std::string(callee.TypeName()) + ")");
  }
  auto call_scope = MakeScope(scope);
  call_scope->is_call_block = true;
  call_scope->Set("caller", Value::MakeFunction(std::move(caller)));
  return callee.function().Call(*this, args, call_scope, call.pos);
}

void Interpreter::EvaluateArguments(const std::vector<NodePtr>& args, const ScopePtr& scope,
                                    Array& positional, Object& keyword) {
  for (const NodePtr& arg : args) {
    if (failed()) return;
    if (arg->kind == NodeKind::kSpread) {
      const Value value = Evaluate(*arg->a, scope);
      if (failed()) return;
      if (!value.is_array_like()) {
        Fail(arg->pos, "cannot unpack " + std::string(value.TypeName()) + " with '*'");
        return;
      }
      for (const Value& item : value.array()) positional.push_back(item);
    } else if (arg->kind != NodeKind::kKeywordArgument && arg->kind != NodeKind::kKeywordSpread) {
      positional.push_back(Evaluate(*arg, scope));
    }
  }
  const auto add = [&](const std::string& key, Value value, SourcePos pos) {
    if (keyword.Find(key) != nullptr) {
      Fail(pos, "got multiple values for keyword argument '" + key + "'");
      return;
    }
    keyword.Set(key, std::move(value));
  };
  for (const NodePtr& arg : args) {
    if (failed()) return;
    if (arg->kind == NodeKind::kKeywordArgument) {
      Value value = Evaluate(*arg->a, scope);
      add(arg->text, std::move(value), arg->pos);
    } else if (arg->kind == NodeKind::kKeywordSpread) {
      const Value value = Evaluate(*arg->a, scope);
      if (failed()) return;
      if (!value.is_object_like()) {
        Fail(arg->pos,
             "the argument after ** must be a mapping, not " + std::string(value.TypeName()));
        return;
      }
      for (const auto& [key, item] : value.object().entries()) add(key, item, arg->pos);
    }
  }
}

Array Interpreter::EvaluateCallArguments(const std::vector<NodePtr>& args, const ScopePtr& scope) {
  for (const NodePtr& arg : args) {
    if (arg->kind == NodeKind::kKeywordArgument || arg->kind == NodeKind::kSpread ||
        arg->kind == NodeKind::kKeywordSpread) {
      Array positional;
      Object keyword;
      EvaluateArguments(args, scope, positional, keyword);
      if (keyword.size() > 0) positional.push_back(Value::MakeKeywordArguments(std::move(keyword)));
      return positional;
    }
  }
  Array positional;
  positional.reserve(args.size());
  for (const NodePtr& arg : args) positional.push_back(Evaluate(*arg, scope));
  return positional;
}

Value Interpreter::Evaluate(const Node& node, const ScopePtr& scope) {
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (++steps_ > options_.limits.max_steps) {
    return Fail(
        node.pos,
        "evaluation exceeds the limit of " + std::to_string(options_.limits.max_steps) + " steps",
        ErrorCode::kOverflow);
  }
  switch (node.kind) {
    case NodeKind::kIdentifier:
      return scope->Lookup(node.text);
    case NodeKind::kIntegerLiteral:
      return Value::Integer(node.number);
    case NodeKind::kFloatLiteral:
      return Value::Float(node.number);
    case NodeKind::kStringLiteral:
      return node.literal;
    case NodeKind::kBinary:
      return EvaluateBinary(node, scope);
    case NodeKind::kMember:
      return EvaluateMember(node, scope);
    case NodeKind::kCall:
      return EvaluateCall(node, scope);
    case NodeKind::kFilter: {
      const Value operand = Evaluate(*node.a, scope);
      if (failed() || flow_ != Flow::kNormal) return Value();
      return ApplyFilter(*this, operand, *node.b, scope);
    }
    case NodeKind::kTest:
      return EvaluateTest(node, scope);
    case NodeKind::kTernary: {
      const Value condition = Evaluate(*node.a, scope);
      if (failed() || flow_ != Flow::kNormal) return Value();
      return Evaluate(Truthy(condition) ? *node.b : *node.c, scope);
    }
    case NodeKind::kSelect: {
      const Value condition = Evaluate(*node.b, scope);
      if (failed() || flow_ != Flow::kNormal || !Truthy(condition)) return Value();
      return Evaluate(*node.a, scope);
    }
    case NodeKind::kUnary:
      return EvaluateUnary(node, scope);
    case NodeKind::kArrayLiteral:
    case NodeKind::kTupleLiteral: {
      Array items;
      items.reserve(node.items.size());
      for (const NodePtr& item : node.items) items.push_back(Evaluate(*item, scope));
      return node.kind == NodeKind::kArrayLiteral ? Value::MakeArray(std::move(items))
                                                  : Value::MakeTuple(std::move(items));
    }
    case NodeKind::kObjectLiteral: {
      Object object;
      for (size_t i = 0; i + 1 < node.items.size(); i += 2) {
        const Value key = Evaluate(*node.items[i], scope);
        if (failed()) return Value();
        if (!key.is_string()) {
          return Fail(node.items[i]->pos,
                      "dictionary keys must be strings, got " + std::string(key.TypeName()));
        }
        object.Set(key.str(), Evaluate(*node.items[i + 1], scope));
      }
      return Value::MakeObject(std::move(object));
    }
    case NodeKind::kCallBlock:
      return EvaluateCallBlock(node, scope);
    default:
      return Fail(node.pos, "this construct cannot be used as a value");
  }
}

Value Interpreter::EvaluateCall(const Node& node, const ScopePtr& scope) {
  Array args = EvaluateCallArguments(node.items, scope);
  const Value callee = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (!callee.is(ValueKind::kFunction)) {
    return Fail(node.pos, "call to " + DescribeCallee(*node.a) + ": not a function (got " +
                              std::string(callee.TypeName()) + ")");
  }
  return callee.function().Call(*this, args, scope, node.pos);
}

Value Interpreter::EvaluateMember(const Node& node, const ScopePtr& scope) {
  const Value object = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  Value property;
  const Node& property_node = *node.b;
  if (node.flag) {
    if (property_node.kind == NodeKind::kSlice) return EvaluateSlice(object, property_node, scope);
    property = Evaluate(property_node, scope);
    if (failed()) return Value();
  } else if (property_node.kind == NodeKind::kIntegerLiteral) {
    property = Value::Integer(property_node.number);
  } else {
    property = Value::String(property_node.text);
  }
  if (object.has_entries()) {
    if (!property.is_string()) {
      return Fail(node.pos, "attribute access: a key must be a string, got " +
                                std::string(property.TypeName()));
    }
    if (const Value* found = object.object().Find(property.str())) return *found;
    return object.is_object_like() ? LookupBuiltin(object, property.str()) : Value();
  }
  if (object.is_array_like() || object.is_string()) {
    if (property.is(ValueKind::kInteger)) {
      if (object.is_string()) {
        std::string character;
        if (!text::Utf16At(object.str(), std::trunc(property.number()), character)) return Value();
        return Value::String(std::move(character));
      }
      const Array& items = object.array();
      double index = std::trunc(property.number());
      if (index < 0) index += static_cast<double>(items.size());
      if (index < 0 || index >= static_cast<double>(items.size())) return Value();
      return items[static_cast<size_t>(index)];
    }
    if (property.is_string()) return LookupBuiltin(object, property.str());
    return Fail(node.pos, "subscript: an index must be an integer or a string, got " +
                              std::string(property.TypeName()));
  }
  if (!property.is_string()) {
    return Fail(node.pos, "attribute access: a key must be a string, got " +
                              std::string(property.TypeName()));
  }
  return Value();
}

Value Interpreter::EvaluateSlice(const Value& object, const Node& slice, const ScopePtr& scope) {
  if (!object.is_array_like() && !object.is_string()) {
    return Fail(slice.pos, "slice: can only slice an array or a string, got " +
                               std::string(object.TypeName()));
  }
  double bounds[3] = {0, 0, 1};
  bool given[3] = {false, false, false};
  const Node* parts[3] = {slice.a.get(), slice.b.get(), slice.c.get()};
  for (int i = 0; i < 3; ++i) {
    if (!parts[i]) continue;
    const Value v = Evaluate(*parts[i], scope);
    if (failed()) return Value();
    if (v.is_undefined()) continue;
    if (!v.is(ValueKind::kInteger)) {
      return Fail(parts[i]->pos,
                  "slice: bounds must be integers, got " + std::string(v.TypeName()));
    }
    bounds[i] = v.number();
    given[i] = true;
  }
  std::vector<std::string_view> characters;
  if (object.is_string()) characters = text::CodePoints(object.str());
  const double length =
      static_cast<double>(object.is_string() ? characters.size() : object.array().size());
  const double step = given[2] ? bounds[2] : 1;
  double start = 0;
  double stop = 0;
  if (step >= 0) {
    start = given[0] ? bounds[0] : 0;
    start = start < 0 ? std::max(length + start, 0.0) : std::min(start, length);
    stop = given[1] ? bounds[1] : length;
    stop = stop < 0 ? std::max(length + stop, 0.0) : std::min(stop, length);
  } else {
    start = given[0] ? bounds[0] : length - 1;
    start = start < 0 ? std::max(length + start, -1.0) : std::min(start, length - 1);
    stop = given[1] ? bounds[1] : -1;
    stop = stop < -1 ? std::max(length + stop, -1.0) : std::min(stop, length - 1);
  }
  const double direction = step > 0 ? 1 : (step < 0 ? -1 : 0);
  std::string text_out;
  Array items_out;
  for (double i = start; direction * i < direction * stop; i += step) {
    const size_t k = static_cast<size_t>(i);
    if (object.is_string()) {
      text_out.append(characters[k]);
    } else {
      items_out.push_back(object.array()[k]);
    }
  }
  if (object.is_string()) return Value::String(std::move(text_out));
  return Value::MakeArray(std::move(items_out));
}

Value Interpreter::EvaluateUnary(const Node& node, const ScopePtr& scope) {
  const Value operand = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (node.text == "not") return Value::Boolean(!Truthy(operand));
  if (!IsNumericLike(operand)) {
    return Fail(node.pos,
                "unary '" + node.text + "': cannot apply to " + std::string(operand.TypeName()));
  }
  const double sign = node.text == "-" ? -1 : 1;
  return NumberResult(sign * operand.number(), operand.is(ValueKind::kFloat));
}

Value Interpreter::EvaluateTest(const Node& node, const ScopePtr& scope) {
  const Value operand = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  bool result = false;
  if (!RunTest(*this, node.text, operand, nullptr, node.pos, &result)) {
    return Fail(node.pos, "unknown test '" + node.text + "'", ErrorCode::kUnsupported);
  }
  if (failed()) return Value();
  return Value::Boolean(node.flag ? !result : result);
}

Value Interpreter::EvaluateBinary(const Node& node, const ScopePtr& scope) {
  const std::string& op = node.text;
  const Value left = Evaluate(*node.a, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (op == "and") return Truthy(left) ? Evaluate(*node.b, scope) : left;
  if (op == "or") return Truthy(left) ? left : Evaluate(*node.b, scope);
  const Value right = Evaluate(*node.b, scope);
  if (failed() || flow_ != Flow::kNormal) return Value();
  if (op == "==") return Value::Boolean(LooseEquals(left, right));
  if (op == "!=") return Value::Boolean(!LooseEquals(left, right));
  const auto fail_operator = [&] {
    return Fail(node.pos, "operator '" + op + "': cannot apply to " + std::string(left.TypeName()) +
                              " and " + std::string(right.TypeName()));
  };
  const auto raw = [&](const Value& v, std::string& out) {
    std::string error;
    if (ToRawString(v, out, &error)) return true;
    Fail(node.pos, "operator '" + op + "': " + error);
    return false;
  };
  const auto concat = [&](const Value& a, const Value& b) {
    std::string s;
    if ((!a.is_undefined() && !raw(a, s)) || (!b.is_undefined() && !raw(b, s))) return Value();
    if (!CheckSize(s.size(), node.pos)) return Value();
    return Value::String(std::move(s));
  };
  if (left.is_number() && right.is_number() && op != "~" && op != "**") {
    const double a = left.number();
    const double b = right.number();
    const bool is_float = left.is(ValueKind::kFloat) || right.is(ValueKind::kFloat);
    if (op == "+") return NumberResult(a + b, is_float);
    if (op == "-") return NumberResult(a - b, is_float);
    if (op == "*") return NumberResult(a * b, is_float);
    if (op == "/") return Value::Float(a / b);
    if (op == "//") return NumberResult(std::floor(a / b), is_float);
    if (op == "%") return NumberResult(std::fmod(a, b), is_float);
    if (op == "<") return Value::Boolean(a < b);
    if (op == ">") return Value::Boolean(a > b);
    if (op == ">=") return Value::Boolean(a >= b);
    if (op == "<=") return Value::Boolean(a <= b);
  } else if (left.is_undefined() || right.is_undefined()) {
    if (right.is_undefined() && (op == "in" || op == "not in"))
      return Value::Boolean(op == "not in");
    if (op == "~" && !left.is_null() && !right.is_null()) return concat(left, right);
    return Fail(node.pos, "operator '" + op + "': an operand is undefined");
  } else if (left.is_null() || right.is_null()) {
    return Fail(node.pos, "operator '" + op + "': an operand is none");
  } else if (op == "~") {
    return concat(left, right);
  } else if (op == "**" && IsNumericLike(left) && IsNumericLike(right)) {
    const double a = left.number();
    const double b = right.number();
    if (a == 0 && b < 0)
      return Fail(node.pos, "operator '**': 0.0 cannot be raised to a negative power");
    const double result = std::pow(a, b);
    if (!std::isfinite(result))
      return Fail(node.pos, "operator '**': the result is not a finite real number");
    return NumberResult(result, left.is(ValueKind::kFloat) || right.is(ValueKind::kFloat) || b < 0);
  } else if (left.is_array_like() && right.is_array_like()) {
    if (op == "+") {
      if (!CheckSize(left.array().size() + right.array().size(), node.pos)) return Value();
      Array items = left.array();
      items.insert(items.end(), right.array().begin(), right.array().end());
      return Value::MakeArray(std::move(items));
    }
  } else if (right.is_array_like()) {
    bool member = false;
    for (const Value& item : right.array()) member = member || StrictEquals(item, left);
    if (op == "in") return Value::Boolean(member);
    if (op == "not in") return Value::Boolean(!member);
  }
  if ((left.is_string() || right.is_string()) && op == "+") return concat(left, right);
  if (left.is_string() && right.is_string()) {
    const bool contains = right.str().find(left.str()) != std::string::npos;
    if (op == "in") return Value::Boolean(contains);
    if (op == "not in") return Value::Boolean(!contains);
  }
  if (left.is_string() && right.is_object_like()) {
    const bool has = right.object().Find(left.str()) != nullptr;
    if (op == "in") return Value::Boolean(has);
    if (op == "not in") return Value::Boolean(!has);
  }
  return fail_operator();
}

}  // namespace hubwatch::chat_template
