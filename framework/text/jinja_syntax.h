#pragma once
// Internal to framework/text: the syntax tree of a Jinja template and the lexer and parser
// that build it (jinja.h is the public face). The language is the part of Jinja2 that chat
// templates use: text, {{ expressions }}, {# comments #}, whitespace control with '-',
// if/elif/else, for (with `loop`, an `if` filter, else, break and continue), set (names,
// namespace attributes, tuples, blocks), macros; expressions with Python's operators,
// literals, subscripts and slices, calls with keyword arguments, filters and tests.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/text/jinja_value.h"

namespace skiff::text::jinja {

struct Token {
  enum class Kind { Text, Name, String, Int, Float, Op, VarBegin, VarEnd, BlockBegin, BlockEnd, End };
  Kind kind;
  std::string text;  // text, name, string value, number or operator
  int line = 1;
};

/// Splits a template into tokens, applying '-' whitespace control. The source has had
/// Hugging Face's lstrip_blocks / trim_blocks applied already (see Template).
/// \throws ValueError naming `name` and the line for an unterminated tag or string.
std::vector<Token> tokenize(std::string_view source, const std::string& name);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,  // value
    Name,     // name
    Attr,     // args[0].name
    Index,    // args[0][args[1]]
    Slice,    // args[0][args[1]:args[2]:args[3]], absent parts null
    Call,     // args[0](args[1..], kwargs)
    Filter,   // args[0] | name(args[1..], kwargs)
    Test,     // args[0] is [not] name(args[1..]); `negated`
    Unary,    // op args[0]: "not", "-", "+"
    Binary,   // args[0] op args[1]: and or == != < > <= >= in "not in" + - * / // % ** ~
    Ternary,  // args[0] if args[1] else args[2] (args[2] null: undefined)
    List,     // [args...]
    Tuple,    // (args...), a list at run time
    Dict,     // {args[0]: args[1], ...}
  };
  Kind kind;
  int line = 1;
  std::string name;  // name, attribute, filter, test or operator
  Value value;       // Literal
  bool negated = false;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Node;
using Body = std::vector<Node>;

struct Node {
  enum class Kind {
    Text,      // text
    Output,    // {{ expr }}
    If,        // branches: (condition or null for else, body)
    For,       // for targets in expr [if filter]: body [else: else_body]
    Set,       // set targets = expr, or set target.attr = expr
    SetBlock,  // set target %} body {% endset
    Macro,     // macro name(params) body
    Break,
    Continue,
  };
  Kind kind;
  int line = 1;
  std::string text;                  // Text; Set/SetBlock/Macro: the name; Set: `attr` for ns.attr
  std::string attr;                  // Set on a namespace attribute
  std::vector<std::string> targets;  // For, Set with a tuple
  ExprPtr expr;                      // Output, For (iterable), Set (value)
  ExprPtr filter;                    // For ... if filter
  std::vector<std::pair<ExprPtr, Body>> branches;  // If
  Body body, else_body;                            // For, SetBlock, Macro
  std::vector<std::pair<std::string, ExprPtr>> params;  // Macro: name, default (or null)
};

/// Parses tokens into a template body. \throws ValueError naming `name` and the line.
Body parse(const std::vector<Token>& tokens, const std::string& name);

}  // namespace skiff::text::jinja
