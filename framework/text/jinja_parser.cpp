// Jinja's grammar, recursive descent, with Jinja2's operator precedence (lowest first):
// `x if c else y`, or, and, not, comparisons and `in`, `~`, + -, * / // %, **, unary - +,
// then a primary with its postfixes (.attr, [index], [slice], (call)) and filters and
// tests (`|` and `is`), which bind tighter than any binary operator:
// `messages|length - 1` is `(messages|length) - 1`.
#include <charconv>
#include <cstdlib>

#include "framework/core/error.h"
#include "framework/text/jinja_syntax.h"

namespace skiff::text::jinja {
namespace {

using K = Token::Kind;

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const std::string& name) : t_(tokens), name_(name) {}

  Body parse_template() {
    Body body = parse_body({});
    if (peek().kind != K::End) fail(peek().line, "unexpected '{% " + peek_block_keyword() + " %}'");
    return body;
  }

 private:
  // ---- statements ----

  static Node node(Node::Kind kind, int line) {
    Node n;
    n.kind = kind;
    n.line = line;
    return n;
  }

  // Nodes up to (not including) a block tag whose keyword is one of `ends`, or the end.
  // `opener` is the statement being read (the "if" of line 3), for the error when the
  // template ends first.
  Body parse_body(const std::vector<std::string_view>& ends, const Node* opener = nullptr) {
    Body body;
    while (peek().kind != K::End) {
      const Token& tok = peek();
      if (tok.kind == K::Text) {
        Node n = node(Node::Kind::Text, tok.line);
        n.text = tok.text;
        body.push_back(std::move(n));
        ++i_;
      } else if (tok.kind == K::VarBegin) {
        ++i_;
        Node n = node(Node::Kind::Output, tok.line);
        n.expr = parse_expr();
        expect(K::VarEnd, "'}}'");
        body.push_back(std::move(n));
      } else if (tok.kind == K::BlockBegin) {
        const std::string kw = peek_block_keyword();
        for (std::string_view e : ends)
          if (kw == e) return body;
        body.push_back(parse_statement());
      } else {
        fail(tok.line, "unexpected '" + tok.text + "'");
      }
    }
    if (!ends.empty())
      fail(opener ? opener->line : t_.back().line,
           fmt::format("'{{% {} %}}' is never closed with '{{% {} %}}'", !opener ? "" : opener->kind == Node::Kind::Macro ? "macro" : opener->text, ends.back()));
    return body;
  }

  std::string peek_block_keyword() const {
    if (peek().kind != K::BlockBegin || i_ + 1 >= t_.size() || t_[i_ + 1].kind != K::Name) return "";
    return t_[i_ + 1].text;
  }

  // Consumes "{% keyword" and returns the keyword's line.
  int open_block(std::string_view keyword) {
    expect(K::BlockBegin, "'{%'");
    const Token& kw = next();
    if (kw.kind != K::Name || kw.text != keyword) fail(kw.line, fmt::format("expected '{}'", keyword));
    return kw.line;
  }

  void close_block() { expect(K::BlockEnd, "'%}'"); }

  void end_block(std::string_view keyword) {
    open_block(keyword);
    close_block();
  }

  Node parse_statement() {
    Nest nest(*this);
    ++i_;  // {%
    const Token& kw = next();
    if (kw.kind != K::Name) fail(kw.line, "expected a statement after '{%'");
    Node n = node(Node::Kind::Text, kw.line);
    if (kw.text == "if") {
      n.kind = Node::Kind::If;
      n.text = "if";
      ExprPtr cond = parse_expr();
      close_block();
      while (true) {
        Body b = parse_body({"elif", "else", "endif"}, &n);
        n.branches.emplace_back(std::move(cond), std::move(b));
        const std::string k = peek_block_keyword();
        if (k == "endif") break;
        open_block(k);
        if (k == "elif") {
          cond = parse_expr();
        } else {
          cond = nullptr;
          close_block();
          n.branches.emplace_back(nullptr, parse_body({"endif"}, &n));
          break;
        }
        close_block();
      }
      end_block("endif");
    } else if (kw.text == "for") {
      n.kind = Node::Kind::For;
      n.text = "for";
      n.targets = parse_targets();
      expect_name("in");
      n.expr = parse_ternary(/*allow_if=*/false);
      if (accept_name("if")) n.filter = parse_expr();
      if (accept_name("recursive")) fail(kw.line, "recursive loops are not supported");
      close_block();
      n.body = parse_body({"else", "endfor"}, &n);
      if (peek_block_keyword() == "else") {
        end_block("else");
        n.else_body = parse_body({"endfor"}, &n);
      }
      end_block("endfor");
    } else if (kw.text == "set") {
      n.targets = parse_targets();
      if (n.targets.size() == 1 && accept_op(".")) {
        n.attr = expect_name_token("an attribute name after '.'");
      }
      if (accept_op("=")) {
        n.kind = Node::Kind::Set;
        n.expr = parse_expr_or_tuple();
        close_block();
      } else {
        if (n.targets.size() != 1 || !n.attr.empty()) fail(kw.line, "a '{% set %}' block assigns one name");
        n.kind = Node::Kind::SetBlock;
        n.text = "set";
        close_block();
        n.body = parse_body({"endset"}, &n);
        end_block("endset");
      }
    } else if (kw.text == "macro") {
      n.kind = Node::Kind::Macro;
      n.text = expect_name_token("a macro name");
      expect_op("(");
      while (!accept_op(")")) {
        std::string p = expect_name_token("a parameter name");
        ExprPtr def = accept_op("=") ? parse_expr() : nullptr;
        n.params.emplace_back(std::move(p), std::move(def));
        if (!accept_op(",")) {
          expect_op(")");
          break;
        }
      }
      close_block();
      n.body = parse_body({"endmacro"}, &n);
      end_block("endmacro");
    } else if (kw.text == "break" || kw.text == "continue") {
      n.kind = kw.text == "break" ? Node::Kind::Break : Node::Kind::Continue;
      close_block();
    } else if (kw.text == "generation" || kw.text == "endgeneration") {
      // Hugging Face's marker for assistant-token masks; it renders nothing.
      n.kind = Node::Kind::Text;
      close_block();
    } else {
      fail(kw.line, fmt::format("unknown tag '{}'", kw.text));
    }
    return n;
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = accept_op("(");
    do names.push_back(expect_name_token("a variable name"));
    while (accept_op(","));
    if (paren) expect_op(")");
    return names;
  }

  // ---- expressions ----

  ExprPtr make(Expr::Kind k, int line, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line;
    e->name = std::move(name);
    return e;
  }

  ExprPtr binary(std::string op, ExprPtr a, ExprPtr b) {
    ExprPtr e = make(Expr::Kind::Binary, a->line, std::move(op));
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  // Nesting ("((((...", statements in statements) is bounded so a hostile template
  // cannot exhaust the stack.
  static constexpr int kMaxDepth = 200;
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail(p.peek().line, fmt::format("nested deeper than {} levels", kMaxDepth));
    }
    ~Nest() { --p.depth_; }
  };

  ExprPtr parse_expr() {
    Nest nest(*this);
    return parse_ternary(true);
  }

  // `a, b` without brackets, as `{% set a = 1, 2 %}` allows.
  ExprPtr parse_expr_or_tuple() {
    ExprPtr first = parse_expr();
    if (!is_op(",")) return first;
    ExprPtr tuple = make(Expr::Kind::Tuple, first->line);
    tuple->args.push_back(std::move(first));
    while (accept_op(",")) tuple->args.push_back(parse_expr());
    return tuple;
  }

  ExprPtr parse_ternary(bool allow_if) {
    ExprPtr value = parse_or();
    while (allow_if && accept_name("if")) {
      ExprPtr t = make(Expr::Kind::Ternary, value->line);
      t->args.push_back(std::move(value));
      t->args.push_back(parse_or());
      t->args.push_back(accept_name("else") ? parse_ternary(true) : nullptr);
      value = std::move(t);
    }
    return value;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (accept_name("or")) e = binary("or", std::move(e), parse_and());
    return e;
  }

  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (accept_name("and")) e = binary("and", std::move(e), parse_not());
    return e;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      const int line = next().line;
      ExprPtr e = make(Expr::Kind::Unary, line, "not");
      e->args.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    ExprPtr e = parse_concat();
    while (true) {
      if (peek().kind == K::Op && (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">="))) {
        std::string op = next().text;
        e = binary(op, std::move(e), parse_concat());
      } else if (accept_name("in")) {
        e = binary("in", std::move(e), parse_concat());
      } else if (is_name("not") && i_ + 1 < t_.size() && t_[i_ + 1].kind == K::Name && t_[i_ + 1].text == "in") {
        i_ += 2;
        e = binary("not in", std::move(e), parse_concat());
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_concat() {
    ExprPtr e = parse_sum();
    while (accept_op("~")) e = binary("~", std::move(e), parse_sum());
    return e;
  }

  ExprPtr parse_sum() {
    ExprPtr e = parse_product();
    while (is_op("+") || is_op("-")) {
      std::string op = next().text;
      e = binary(op, std::move(e), parse_product());
    }
    return e;
  }

  ExprPtr parse_product() {
    ExprPtr e = parse_power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      std::string op = next().text;
      e = binary(op, std::move(e), parse_power());
    }
    return e;
  }

  ExprPtr parse_power() {
    ExprPtr e = parse_unary();
    while (accept_op("**")) e = binary("**", std::move(e), parse_unary());
    return e;
  }

  // As Jinja2: the operand of a unary minus takes no filters, so `-x|abs` is `(-x)|abs`.
  ExprPtr parse_unary(bool with_filters = true) {
    Nest nest(*this);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& op = next();
      e = make(Expr::Kind::Unary, op.line, op.text);
      e->args.push_back(parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filters) e = parse_filters_and_tests(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& tok = next();
    switch (tok.kind) {
      case K::String: {
        ExprPtr e = make(Expr::Kind::Literal, tok.line);
        std::string s = tok.text;
        while (peek().kind == K::String) s += next().text;  // adjacent literals join, as in Python
        e->value = Value(std::move(s));
        return e;
      }
      case K::Int: {
        ExprPtr e = make(Expr::Kind::Literal, tok.line);
        int64_t v = 0;
        const auto [p, ec] = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), v);
        if (ec != std::errc()) fail(tok.line, "integer literal " + tok.text + " is out of range");
        e->value = Value(v);
        return e;
      }
      case K::Float: {
        ExprPtr e = make(Expr::Kind::Literal, tok.line);
        // strtod, not stod: 1e999 is inf (as in Python's float()), not an exception.
        e->value = Value(std::strtod(tok.text.c_str(), nullptr));
        return e;
      }
      case K::Name: {
        ExprPtr e = make(Expr::Kind::Literal, tok.line);
        if (tok.text == "true" || tok.text == "True") e->value = Value(true);
        else if (tok.text == "false" || tok.text == "False") e->value = Value(false);
        else if (tok.text == "none" || tok.text == "None") e->value = Value(nullptr);
        else e = make(Expr::Kind::Name, tok.line, tok.text);
        return e;
      }
      case K::Op:
        if (tok.text == "(") {
          if (accept_op(")")) return make(Expr::Kind::Tuple, tok.line);
          ExprPtr first = parse_expr();
          if (accept_op(")")) return first;
          ExprPtr tuple = make(Expr::Kind::Tuple, tok.line);
          tuple->args.push_back(std::move(first));
          while (accept_op(",")) {
            if (is_op(")")) break;
            tuple->args.push_back(parse_expr());
          }
          expect_op(")");
          return tuple;
        }
        if (tok.text == "[") {
          ExprPtr list = make(Expr::Kind::List, tok.line);
          while (!accept_op("]")) {
            list->args.push_back(parse_expr());
            if (!accept_op(",")) {
              expect_op("]");
              break;
            }
          }
          return list;
        }
        if (tok.text == "{") {
          ExprPtr dict = make(Expr::Kind::Dict, tok.line);
          while (!accept_op("}")) {
            dict->args.push_back(parse_expr());
            expect_op(":");
            dict->args.push_back(parse_expr());
            if (!accept_op(",")) {
              expect_op("}");
              break;
            }
          }
          return dict;
        }
        break;
      default: break;
    }
    fail(tok.line, fmt::format("expected an expression, got {}", describe(tok)));
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (accept_op(".")) {
        const Token& tok = next();
        if (tok.kind != K::Name && tok.kind != K::Int) fail(tok.line, "expected an attribute name after '.'");
        ExprPtr a = make(tok.kind == K::Int ? Expr::Kind::Index : Expr::Kind::Attr, tok.line, tok.text);
        a->args.push_back(std::move(e));
        if (tok.kind == K::Int) {  // x.0 is x[0] in Jinja
          ExprPtr idx = make(Expr::Kind::Literal, tok.line);
          int64_t v = 0;
          const auto [end, ec] = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), v);
          if (ec != std::errc()) fail(tok.line, "index ." + tok.text + " is out of range");
          idx->value = Value(v);
          a->args.push_back(std::move(idx));
        }
        e = std::move(a);
      } else if (is_op("[")) {
        e = parse_subscript(std::move(e));
      } else if (is_op("(")) {
        ExprPtr call = make(Expr::Kind::Call, peek().line);
        call->args.push_back(std::move(e));
        parse_call_args(*call);
        e = std::move(call);
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr target) {
    const int line = next().line;  // [
    ExprPtr parts[3];
    int colons = 0;
    while (!is_op("]")) {
      if (accept_op(":")) {
        if (++colons > 2) fail(line, "a slice has at most two ':'");
        continue;
      }
      if (parts[colons]) fail(line, "expected ':' or ']' in a subscript");
      parts[colons] = parse_expr();
    }
    expect_op("]");
    ExprPtr e = make(colons ? Expr::Kind::Slice : Expr::Kind::Index, line);
    e->args.push_back(std::move(target));
    if (!colons) {
      if (!parts[0]) fail(line, "an empty subscript '[]'");
      e->args.push_back(std::move(parts[0]));
    } else {
      for (auto& p : parts) e->args.push_back(std::move(p));
    }
    return e;
  }

  // "(a, b, key=c)" into e.args (after what is there) and e.kwargs.
  void parse_call_args(Expr& e) {
    expect_op("(");
    while (!accept_op(")")) {
      if (peek().kind == K::Name && i_ + 1 < t_.size() && t_[i_ + 1].kind == K::Op && t_[i_ + 1].text == "=") {
        std::string key = next().text;
        ++i_;  // =
        e.kwargs.emplace_back(std::move(key), parse_expr());
      } else {
        if (!e.kwargs.empty()) fail(peek().line, "a positional argument follows a keyword argument");
        e.args.push_back(parse_expr());
      }
      if (!accept_op(",")) {
        expect_op(")");
        break;
      }
    }
  }

  ExprPtr parse_filters_and_tests(ExprPtr e) {
    while (true) {
      if (accept_op("|")) {
        ExprPtr f = make(Expr::Kind::Filter, peek().line, expect_name_token("a filter name after '|'"));
        f->args.push_back(std::move(e));
        if (is_op("(")) parse_call_args(*f);
        e = std::move(f);
      } else if (accept_name("is")) {
        const bool negated = accept_name("not");
        const Token& name = next();
        // `none`, `true` and `false` lex as names; so do the tests.
        if (name.kind != K::Name) fail(name.line, "expected a test name after 'is'");
        ExprPtr t = make(Expr::Kind::Test, name.line, name.text);
        t->negated = negated;
        t->args.push_back(std::move(e));
        if (is_op("(")) {
          parse_call_args(*t);
        } else if (peek().kind == K::String || peek().kind == K::Int || peek().kind == K::Float ||
                   (peek().kind == K::Name && !is_keyword(peek().text))) {
          t->args.push_back(parse_primary());  // `x is divisibleby 3`, `x is sameas y`
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  static bool is_keyword(const std::string& s) {
    return s == "and" || s == "or" || s == "not" || s == "in" || s == "is" || s == "if" || s == "else";
  }

  // ---- token helpers ----

  const Token& peek() const { return t_[i_]; }
  const Token& next() {
    const Token& t = t_[i_];
    if (t.kind != K::End) ++i_;
    return t;
  }
  bool is_op(std::string_view op) const { return peek().kind == K::Op && peek().text == op; }
  bool is_name(std::string_view n) const { return peek().kind == K::Name && peek().text == n; }
  bool accept_op(std::string_view op) {
    if (!is_op(op)) return false;
    ++i_;
    return true;
  }
  bool accept_name(std::string_view n) {
    if (!is_name(n)) return false;
    ++i_;
    return true;
  }
  void expect_op(std::string_view op) {
    if (!accept_op(op)) fail(peek().line, fmt::format("expected '{}', got {}", op, describe(peek())));
  }
  void expect_name(std::string_view n) {
    if (!accept_name(n)) fail(peek().line, fmt::format("expected '{}', got {}", n, describe(peek())));
  }
  std::string expect_name_token(std::string_view what) {
    if (peek().kind != K::Name) fail(peek().line, fmt::format("expected {}, got {}", what, describe(peek())));
    return next().text;
  }
  void expect(K kind, std::string_view what) {
    if (peek().kind != kind) fail(peek().line, fmt::format("expected {}, got {}", what, describe(peek())));
    ++i_;
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case K::Text: return "text";
      case K::VarEnd: return "'}}'";
      case K::BlockEnd: return "'%}'";
      case K::VarBegin: return "'{{'";
      case K::BlockBegin: return "'{%'";
      case K::End: return "the end of the template";
      case K::String: return "a string";
      default: return "'" + t.text + "'";
    }
  }

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw ValueError(fmt::format("template {} line {}: {}", name_, line, what));
  }

  const std::vector<Token>& t_;
  const std::string& name_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse(const std::vector<Token>& tokens, const std::string& name) { return Parser(tokens, name).parse_template(); }

}  // namespace skiff::text::jinja
