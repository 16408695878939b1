#pragma once

// The syntax tree of a parsed template. One node type; which fields a node uses depends on its
// kind (listed beside each kind). Nodes are immutable after parsing and owned by their parent;
// a parsed Template owns the root and can be rendered from many threads at once.

#include <memory>
#include <string>
#include <vector>

#include "tracker/chat_template/value.h"

namespace hubwatch::chat_template {

enum class NodeKind {
  // Statements (appear in bodies).
  kText,         // text: the literal text
  kComment,      //
  kIf,           // a: test; body; alternate (an elif is a nested kIf alone in alternate)
  kFor,          // a: loop target (Identifier or Tuple); b: iterable (may be kSelect); body;
                 // alternate: the {% else %} block
  kSet,          // a: target (Identifier, Tuple or Member); b: value, or null with body
  kMacro,        // text: name; items: parameters (Identifier or KeywordArgument); body
  kCallBlock,    // a: the kCall; items: caller parameters; flag: caller parameters given; body
  kFilterBlock,  // a: filter (Identifier or Call); body
  kBreak,
  kContinue,
  // Expressions (a statement body may hold any of these: {{ expression }}).
  kIdentifier,       // text: name
  kIntegerLiteral,   // number
  kFloatLiteral,     // number
  kStringLiteral,    // text; literal: the value
  kArrayLiteral,     // items
  kTupleLiteral,     // items
  kObjectLiteral,    // items: key, value, key, value, ...
  kMember,           // a: object; b: property; flag: computed (obj[expr]) rather than obj.name
  kSlice,            // a, b, c: start, stop, step (each may be null)
  kCall,             // a: callee; items: arguments
  kFilter,           // a: operand; b: filter (Identifier or Call)
  kTest,             // a: operand; text: test name; flag: negated (is not)
  kUnary,            // text: operator (not, -, +); a: operand
  kBinary,           // text: operator; a, b: operands
  kTernary,          // a: condition; b: value if true; c: value if false
  kSelect,           // a: value; b: condition (`x if cond` without else)
  kKeywordArgument,  // text: name; a: value
  kSpread,           // a: operand (*args)
  kKeywordSpread,    // a: operand (**kwargs)
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeKind kind;
  SourcePos pos;
  std::string text;
  double number = 0;
  bool flag = false;
  Value literal;
  NodePtr a, b, c;
  std::vector<NodePtr> items;
  std::vector<NodePtr> body;
  std::vector<NodePtr> alternate;

  Node(NodeKind k, SourcePos p) : kind(k), pos(p) {}
};

inline NodePtr MakeNode(NodeKind kind, SourcePos pos) { return std::make_unique<Node>(kind, pos); }

}  // namespace hubwatch::chat_template
