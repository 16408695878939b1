// Macros ({% macro %}) and {% call %} blocks: the special-argument analysis (caller, kwargs,
// varargs), argument binding and the callable values, as @huggingface/jinja does them.

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tracker/chat_template/interpreter.h"

namespace hubwatch::chat_template {
namespace {

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

// A macro, or the `caller` of a {% call %} block: renders the body with the arguments bound.
class BodyFunction : public Function {
 public:
  BodyFunction(const Node& node, ScopePtr scope, bool is_macro)
      : node_(node),
        scope_(std::move(scope)),
        special_(SpecialArgumentScan().Run(node.items, node.body)),
        is_macro_(is_macro) {}

  Value Call(Interpreter& in, std::vector<Value>& args, const ScopePtr& call_scope,
             SourcePos at) const override {
    if (!in.EnterCall(at)) return Value();
    ScopePtr parent = scope_;
    if (is_macro_ && special_.caller) {
      // A macro reads `caller` from the {% call %} block that invoked it, if any.
      const Value* caller =
          call_scope && call_scope->is_call_block ? call_scope->FindOwn("caller") : nullptr;
      parent = in.MakeScope(scope_);
      parent->Set("caller", caller ? *caller : Value());
    }
    auto body_scope = in.MakeScope(parent);
    // Call blocks are anonymous; the reference names them None in errors.
    BindArguments(in, is_macro_ ? "'" + node_.text + "'" : "None", node_.items, special_, args,
                  body_scope, at);
    Value result = in.failed() ? Value() : Value::String(in.RenderToString(node_.body, body_scope));
    in.LeaveCall();
    return result;
  }

 private:
  const Node& node_;
  ScopePtr scope_;
  SpecialArguments special_;
  bool is_macro_;
};

}  // namespace

std::shared_ptr<const Function> MakeMacro(const Node& node, ScopePtr scope) {
  return std::make_shared<BodyFunction>(node, std::move(scope), /*is_macro=*/true);
}

std::shared_ptr<const Function> MakeCaller(const Node& node, ScopePtr scope) {
  return std::make_shared<BodyFunction>(node, std::move(scope), /*is_macro=*/false);
}

}  // namespace hubwatch::chat_template
