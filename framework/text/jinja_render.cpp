// Renders a parsed Jinja template: statements write text, expressions evaluate to Values
// with Python's semantics. Scopes follow Jinja2: a for loop's body gets its own scope each
// iteration, so `{% set %}` inside a loop does not leak out (templates use namespace() for
// that); `if` blocks share the enclosing scope; a macro sees the template's top level and
// its arguments.
#include <cmath>

#include "framework/core/error.h"
#include "framework/text/jinja.h"
#include "framework/text/jinja_builtins.h"
#include "framework/text/jinja_syntax.h"
#include "framework/text/unicode.h"

namespace skiff::text {
namespace jinja {
namespace {

[[noreturn]] void fail(const std::string& what) { throw RenderError(what); }

// Jinja2's keep_trailing_newline is off: one newline at the end of the source goes.
std::string drop_trailing_newline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

constexpr int64_t kMaxRepeatedItems = int64_t(1) << 20;
constexpr int kMaxMacroDepth = 64;  // nested macro calls (a macro calling itself forever stops here)

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) fail(fmt::format("'{}' is undefined", a.as_undefined().name));
  if (b.is_undefined()) fail(fmt::format("'{}' is undefined", b.as_undefined().name));
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.is_list() && b.is_list()) {
      List l = a.as_list();
      l.insert(l.end(), b.as_list().begin(), b.as_list().end());
      return Value(std::move(l));
    }
  }
  if (op == "*" && (a.is_string() || a.is_list()) && b.is_int()) {
    // Templates come with downloaded models: a repetition may not eat the machine.
    const int64_t unit = a.is_string() ? int64_t(a.as_string().size()) : int64_t(a.as_list().size());
    if (b.as_int() > 0 && unit > 0 && b.as_int() > kMaxRepeatedItems / unit)
      fail(fmt::format("a repetition of {} x {} is too large (the limit is {} items)", unit, b.as_int(), kMaxRepeatedItems));
    if (a.is_string()) {
      std::string s;
      for (int64_t i = 0; i < b.as_int(); ++i) s += a.as_string();
      return Value(std::move(s));
    }
    List l;
    for (int64_t i = 0; i < b.as_int(); ++i) l.insert(l.end(), a.as_list().begin(), a.as_list().end());
    return Value(std::move(l));
  }
  const bool numbers = (a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool());
  if (!numbers) fail(fmt::format("unsupported operand types for {}: '{}' and '{}'", op, a.type_name(), b.type_name()));
  const bool ints = !a.is_float() && !b.is_float();
  const double x = a.as_number(), y = b.as_number();
  if ((op == "/" || op == "//" || op == "%") && y == 0) fail("division by zero");
  if (op == "/") return Value(x / y);
  if (op == "**" && !(ints && y >= 0)) return Value(std::pow(x, y));
  if (ints) {
    // Python's integers never overflow; 64-bit ones do, and a template that gets there is
    // refused rather than given a wrapped-around number.
    auto integer = [](const Value& v) { return v.is_bool() ? int64_t(v.as_bool()) : v.as_int(); };
    const int64_t i = integer(a), j = integer(b);
    int64_t r = 0;
    bool overflow = false;
    if (op == "**") {
      const double p = std::pow(x, y);
      overflow = !(std::abs(p) < 0x1p63);
      if (!overflow) r = int64_t(std::llround(p));
    } else if (op == "+") {
      overflow = __builtin_add_overflow(i, j, &r);
    } else if (op == "-") {
      overflow = __builtin_sub_overflow(i, j, &r);
    } else if (op == "*") {
      overflow = __builtin_mul_overflow(i, j, &r);
    } else if (i == INT64_MIN && j == -1) {
      overflow = true;
    } else {
      const int64_t q = i / j - ((i % j != 0) && ((i < 0) != (j < 0)));  // floor, as Python's //
      r = op == "//" ? q : i - q * j;
    }
    if (overflow) fail(fmt::format("{} {} {} overflows a 64-bit integer", i, op, j));
    return Value(r);
  }
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  const double q = std::floor(x / y);
  return op == "//" ? Value(q) : Value(x - q * y);
}

class Renderer {
 public:
  Renderer(const std::string& name, Dict top) : name_(name) { scopes_.push_back(std::move(top)); }

  enum class Flow { Normal, Break, Continue };

  Flow exec(const Body& body, std::string& out) {
    for (const Node& n : body) {
      const Flow f = exec(n, out);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

 private:
  Flow exec(const Node& n, std::string& out) {
    switch (n.kind) {
      case Node::Kind::Text: out += n.text; break;
      case Node::Kind::Output: out += eval(*n.expr).str(); break;
      case Node::Kind::If:
        for (const auto& [cond, body] : n.branches)
          if (!cond || eval(*cond).truthy()) return exec(body, out);
        break;
      case Node::Kind::For: return exec_for(n, out);
      case Node::Kind::Set: {
        Value v = eval(*n.expr);
        if (!n.attr.empty()) {
          Value target = lookup(n.targets[0]);
          if (!target.is_namespace())
            throw_at(n.line, fmt::format("cannot set '{}.{}': '{}' is a {}, not a namespace()", n.targets[0], n.attr, n.targets[0], target.type_name()));
          dict_set(target.as_namespace().attrs, n.attr, std::move(v));
        } else {
          assign_targets(n.targets, v, n.line);
        }
        break;
      }
      case Node::Kind::SetBlock: {
        std::string captured;
        exec(n.body, captured);
        dict_set(scopes_.back(), n.targets[0], Value(std::move(captured)));
        break;
      }
      case Node::Kind::Macro: dict_set(scopes_.back(), n.text, make_macro(n)); break;
      case Node::Kind::Break: return Flow::Break;
      case Node::Kind::Continue: return Flow::Continue;
    }
    return Flow::Normal;
  }

  Flow exec_for(const Node& n, std::string& out) {
    List items;
    for (const Value& item : eval_iterable(*n.expr)) {
      if (n.filter) {
        scopes_.emplace_back();
        assign_targets(n.targets, item, n.line);
        const bool keep = eval(*n.filter).truthy();
        scopes_.pop_back();
        if (!keep) continue;
      }
      items.push_back(item);
    }
    if (items.empty()) return exec(n.else_body, out);
    const int64_t len = int64_t(items.size());
    for (int64_t i = 0; i < len; ++i) {
      scopes_.emplace_back();
      assign_targets(n.targets, items[size_t(i)], n.line);
      Dict loop{{"index", Value(i + 1)},
                {"index0", Value(i)},
                {"revindex", Value(len - i)},
                {"revindex0", Value(len - i - 1)},
                {"first", Value(i == 0)},
                {"last", Value(i == len - 1)},
                {"length", Value(len)},
                {"previtem", i > 0 ? items[size_t(i - 1)] : Value(Undefined{"loop.previtem"})},
                {"nextitem", i + 1 < len ? items[size_t(i + 1)] : Value(Undefined{"loop.nextitem"})}};
      dict_set(scopes_.back(), "loop", Value(std::move(loop)));
      const Flow f = exec(n.body, out);
      scopes_.pop_back();
      if (f == Flow::Break) break;
    }
    return Flow::Normal;
  }

  List eval_iterable(const Expr& e) {
    const Value v = eval(e);
    try {
      return iterate(v);
    } catch (const RenderError& err) {
      throw_at(e.line, err.what());
    }
  }

  void assign_targets(const std::vector<std::string>& targets, const Value& v, int line) {
    if (targets.size() == 1) {
      dict_set(scopes_.back(), targets[0], v);
      return;
    }
    const List items = v.is_list() ? v.as_list() : List();
    if (items.size() != targets.size())
      throw_at(line, fmt::format("cannot unpack a {} into {} names", v.type_name(), targets.size()));
    for (size_t i = 0; i < targets.size(); ++i) dict_set(scopes_.back(), targets[i], items[i]);
  }

  Value make_macro(const Node& n) {
    return Value(Function([this, &n](std::vector<Value>& args, KwArgs& kwargs) {
      if (args.size() > n.params.size()) fail(fmt::format("macro '{}' takes {} arguments, got {}", n.text, n.params.size(), args.size()));
      if (macro_depth_ >= kMaxMacroDepth) fail(fmt::format("macro '{}': calls nested deeper than {}", n.text, kMaxMacroDepth));
      struct DepthGuard {
        int& d;
        explicit DepthGuard(int& depth) : d(++depth) {}
        ~DepthGuard() { --d; }
      } guard(macro_depth_);
      Dict frame;
      for (size_t i = 0; i < n.params.size(); ++i) {
        const auto& [pname, def] = n.params[i];
        Value v = i < args.size() ? args[i] : Value(Undefined{pname});
        for (auto& [k, kv] : kwargs)
          if (k == pname) v = kv;
        if (v.is_undefined() && def) v = eval(*def);
        frame.emplace_back(pname, std::move(v));
      }
      std::vector<Dict> saved = std::move(scopes_);
      scopes_ = {saved.front(), std::move(frame)};
      std::string out;
      try {
        exec(n.body, out);
      } catch (...) {
        scopes_ = std::move(saved);
        throw;
      }
      saved.front() = std::move(scopes_.front());
      scopes_ = std::move(saved);
      return Value(std::move(out));
    }));
  }

  Value lookup(const std::string& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      Value v = dict_get(*s, name);
      if (!v.is_undefined()) return v;
    }
    return Value(Undefined{name});
  }

  [[noreturn]] void throw_at(int line, const std::string& what) const {
    throw ValueError(fmt::format("template {} line {}: {}", name_, line, what));
  }

  Value eval(const Expr& e) {
    try {
      return eval_unchecked(e);
    } catch (const RenderError& err) {
      throw_at(e.line, err.what());
    }
  }

  std::vector<Value> eval_args(const Expr& e, size_t from) {
    std::vector<Value> args;
    for (size_t i = from; i < e.args.size(); ++i) args.push_back(eval(*e.args[i]));
    return args;
  }

  KwArgs eval_kwargs(const Expr& e) {
    KwArgs kw;
    for (const auto& [k, v] : e.kwargs) kw.emplace_back(k, eval(*v));
    return kw;
  }

  Value eval_unchecked(const Expr& e) {
    using EK = Expr::Kind;
    switch (e.kind) {
      case EK::Literal: return e.value;
      case EK::Name: return lookup(e.name);
      case EK::Attr: {
        const Value obj = eval(*e.args[0]);
        if (obj.is_undefined()) fail(fmt::format("'{}' is undefined, so it has no attribute '{}'", obj.as_undefined().name, e.name));
        if (obj.is_dict()) return dict_get(obj.as_dict(), e.name);
        if (obj.is_namespace()) return dict_get(obj.as_namespace().attrs, e.name);
        return Value(Undefined{e.name});
      }
      case EK::Index: return subscript(eval(*e.args[0]), eval(*e.args[1]));
      case EK::Slice: {
        auto part = [&](size_t i) { return e.args[i] ? eval(*e.args[i]) : Value(); };
        return slice(eval(*e.args[0]), part(1), part(2), part(3));
      }
      case EK::Call: return eval_call(e);
      case EK::Filter: {
        const Value operand = eval(*e.args[0]);
        std::vector<Value> args = eval_args(e, 1);
        KwArgs kw = eval_kwargs(e);
        return apply_filter(e.name, operand, args, kw);
      }
      case EK::Test: {
        const Value operand = eval(*e.args[0]);
        const bool r = apply_test(e.name, operand, eval_args(e, 1));
        return Value(e.negated ? !r : r);
      }
      case EK::Unary: {
        const Value v = eval(*e.args[0]);
        if (e.name == "not") return Value(!v.truthy());
        if (v.is_int()) return Value(e.name == "-" ? -v.as_int() : v.as_int());
        if (v.is_float()) return Value(e.name == "-" ? -v.as_number() : v.as_number());
        fail(fmt::format("bad operand type for unary {}: '{}'", e.name, v.type_name()));
      }
      case EK::Binary: return eval_binary(e);
      case EK::Ternary:
        if (eval(*e.args[1]).truthy()) return eval(*e.args[0]);
        return e.args[2] ? eval(*e.args[2]) : Value(Undefined{"else"});
      case EK::List:
      case EK::Tuple: return Value(eval_args(e, 0));
      case EK::Dict: {
        Dict d;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          const Value k = eval(*e.args[i]);
          if (!k.is_string()) fail(fmt::format("dict keys must be strings here, got {}", k.type_name()));
          dict_set(d, k.as_string(), eval(*e.args[i + 1]));
        }
        return Value(std::move(d));
      }
    }
    fail("unknown expression");
  }

  Value eval_call(const Expr& e) {
    std::vector<Value> args = eval_args(e, 1);
    KwArgs kw = eval_kwargs(e);
    const Expr& callee = *e.args[0];
    if (callee.kind == Expr::Kind::Attr) {
      const Value obj = eval(*callee.args[0]);
      Value member;
      if (obj.is_dict()) member = dict_get(obj.as_dict(), callee.name);
      if (obj.is_namespace()) member = dict_get(obj.as_namespace().attrs, callee.name);
      if (member.is_function()) return member.as_function()(args, kw);
      bool found = false;
      Value r = call_method(obj, callee.name, args, kw, found);
      if (!found) {
        if (obj.is_undefined()) fail(fmt::format("'{}' is undefined, so it has no method '{}'", obj.as_undefined().name, callee.name));
        fail(fmt::format("'{}' object has no method '{}'", obj.type_name(), callee.name));
      }
      return r;
    }
    const Value f = eval(callee);
    if (!f.is_function()) {
      if (f.is_undefined()) fail(fmt::format("'{}' is undefined (not a function this template can call)", f.as_undefined().name));
      fail(fmt::format("'{}' object is not callable", f.type_name()));
    }
    return f.as_function()(args, kw);
  }

  Value eval_binary(const Expr& e) {
    const std::string& op = e.name;
    const Value a = eval(*e.args[0]);
    if (op == "and") return a.truthy() ? eval(*e.args[1]) : a;
    if (op == "or") return a.truthy() ? a : eval(*e.args[1]);
    const Value b = eval(*e.args[1]);
    if (op == "==") return Value(a == b);
    if (op == "!=") return Value(!(a == b));
    if (op == "<") return Value(less(a, b));
    if (op == ">") return Value(less(b, a));
    if (op == "<=") return Value(!less(b, a));
    if (op == ">=") return Value(!less(a, b));
    if (op == "in") return Value(contains(b, a));
    if (op == "not in") return Value(!contains(b, a));
    if (op == "~") return Value(a.str() + b.str());
    return arithmetic(op, a, b);
  }

  const std::string& name_;
  std::vector<Dict> scopes_;
  int macro_depth_ = 0;
};

void check_strings_utf8(const nlohmann::ordered_json& j, const std::string& where) {
  if (j.is_string()) {
    check_utf8(j.get_ref<const std::string&>(), where);
  } else if (j.is_structured()) {
    for (const auto& [k, v] : j.items()) {
      check_utf8(k, where);
      check_strings_utf8(v, where);
    }
  }
}

}  // namespace
}  // namespace jinja

JinjaTemplate::JinjaTemplate(std::string source, std::string name) : name_(std::move(name)) {
  check_utf8(source, "template " + name_);
  const std::string prepared = jinja::drop_trailing_newline(std::move(source));
  body_ = std::make_unique<std::vector<jinja::Node>>(jinja::parse(jinja::tokenize(prepared, name_), name_));
}

JinjaTemplate::~JinjaTemplate() = default;
JinjaTemplate::JinjaTemplate(JinjaTemplate&&) noexcept = default;
JinjaTemplate& JinjaTemplate::operator=(JinjaTemplate&&) noexcept = default;

std::string JinjaTemplate::render(const nlohmann::ordered_json& context) const {
  if (!context.is_object()) throw ValueError(fmt::format("template {}: the context must be a JSON object", name_));
  jinja::check_strings_utf8(context, "template " + name_ + " input");
  std::vector<std::shared_ptr<jinja::Value::Namespace>> namespaces;
  struct BreakCycles {
    std::vector<std::shared_ptr<jinja::Value::Namespace>>& list;
    ~BreakCycles() {
      for (auto& ns : list) ns->attrs.clear();
    }
  } break_cycles{namespaces};
  jinja::Dict top = jinja::global_functions(namespaces);
  for (const auto& [k, v] : context.items()) jinja::dict_set(top, k, jinja::Value::from_json(v));
  std::string out;
  jinja::Renderer(name_, std::move(top)).exec(*body_, out);
  return out;
}

}  // namespace skiff::text
