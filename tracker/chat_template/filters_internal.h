#pragma once

// Internal to the filters (filters.cc: dispatch by name and operand; sequence_filters.cc;
// text_filters.cc); not part of the engine's interface. Each reports a bad operand or argument
// by failing the interpreter and returning undefined (or false). Not thread-safe: the
// interpreter is one render's.

#include <string>
#include <string_view>

#include "tracker/chat_template/interpreter.h"

namespace hubwatch::chat_template::filters_internal {

// --- sequence_filters.cc ---

// Array.prototype.join over the underlying values into `out`: null and undefined join as "".
bool JoinRaw(Interpreter& in, const Array& items, std::string_view separator, std::string& out,
             SourcePos pos);

// The items without repeats (SameValueZero, as a JavaScript Set), in first-seen order.
Value UniqueItems(const Array& items);

// A stable sort, by the items or by their `attribute` path (a string, an integer or null).
Value SortArray(Interpreter& in, const Array& items, bool reverse, bool case_sensitive,
                const Value* attribute, SourcePos pos);

// selectattr (select) / rejectattr: `call` is the filter's Call node.
Value SelectAttr(Interpreter& in, const Value& operand, const Node& call, bool select,
                 const ScopePtr& scope);

// --- text_filters.cc ---

// & < > " ' as HTML entities.
std::string HtmlEscape(std::string_view s);

// tojson, with the keyword arguments indent, ensure_ascii, sort_keys and separators.
Value ToJsonFilter(Interpreter& in, const Value& operand, const Object& keyword, SourcePos pos);

// indent: `width` (spaces, or a string) before every line but the first (unless `first`) and
// the blank ones (unless `blank`).
Value IndentFilter(Interpreter& in, const std::string& s, const Value& width, bool first,
                   bool blank, SourcePos pos);

}  // namespace hubwatch::chat_template::filters_internal
