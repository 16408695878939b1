#pragma once

// Parser: tokens -> syntax tree, with @huggingface/jinja's grammar and operator precedence
// (lowest first): `x if c else y`, or, and, not, comparisons and in / not in, + - ~, * / // %,
// **, `is` tests, | filters, unary + -, calls / attributes / subscripts.
//
// Errors name the construct and its line and column. A construct of Jinja that the engine
// does not support (raw, include, extends, with, ...) is kUnsupported; a malformed template is
// kInvalidInput; nesting deeper than max_nesting is kOverflow.
//
// Pure; thread-safe.

#include <vector>

#include "estimator/base/result.h"
#include "tracker/chat_template/ast.h"
#include "tracker/chat_template/lexer.h"

namespace hubwatch::chat_template {

Result<std::vector<NodePtr>> Parse(const std::vector<Token>& tokens, int max_nesting);

}  // namespace hubwatch::chat_template
