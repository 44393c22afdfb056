#include "framework/text/jinja_builtins.h"

#include <fmt/format.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "framework/text/unicode.h"

namespace skiff::text::jinja {
namespace {

[[noreturn]] void fail(const std::string& what) { throw RenderError(what); }

// ---- strings by character ----

// `s` must be valid UTF-8 (Template::render's inputs are checked).
std::vector<std::string_view> characters(const std::string& s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    next_code_point(s, i);
    out.emplace_back(s.data() + start, std::min(i, s.size()) - start);
  }
  return out;
}

bool is_space_cp(char32_t cp) { return u_isspace(UChar32(cp)) != 0; }

// Python's str.strip / lstrip / rstrip: whitespace, or any character of `chars`.
std::string strip(const std::string& s, const Value& chars, bool left, bool right) {
  const auto cs = characters(s);
  std::vector<std::string_view> set;
  if (chars.is_string()) set = characters(chars.as_string());
  auto strippable = [&](std::string_view c) {
    if (chars.is_string()) return std::find(set.begin(), set.end(), c) != set.end();
    size_t p = 0;
    return is_space_cp(next_code_point(c, p));
  };
  size_t b = 0, e = cs.size();
  if (left)
    while (b < e && strippable(cs[b])) ++b;
  if (right)
    while (e > b && strippable(cs[e - 1])) --e;
  if (b == e) return "";
  return std::string(cs[b].data(), cs[e - 1].data() + cs[e - 1].size() - cs[b].data());
}

std::string change_case(const std::string& s, char how) {
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(s);
  if (how == 'u') u.toUpper();
  else if (how == 'l') u.toLower();
  else u.toTitle(nullptr);
  std::string out;
  return u.toUTF8String(out);
}

std::string capitalize(const std::string& s) {
  if (s.empty()) return s;
  size_t p = 0;
  next_code_point(s, p);
  return change_case(s.substr(0, p), 'u') + change_case(s.substr(p), 'l');
}

List split(const std::string& s, const Value& sep, int64_t maxsplit) {
  List out;
  if (sep.is_string()) {
    const std::string& d = sep.as_string();
    if (d.empty()) fail("split(): empty separator");
    size_t start = 0, hit;
    while ((maxsplit < 0 || int64_t(out.size()) < maxsplit) && (hit = s.find(d, start)) != std::string::npos) {
      out.emplace_back(s.substr(start, hit - start));
      start = hit + d.size();
    }
    out.emplace_back(s.substr(start));
    return out;
  }
  // No separator: runs of whitespace split, and leading/trailing whitespace gives no items.
  const auto cs = characters(s);
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < cs.size(); ++i) {
    size_t p = 0;
    const bool space = is_space_cp(next_code_point(cs[i], p));
    if (space && in_word && (maxsplit < 0 || int64_t(out.size()) < maxsplit)) {
      out.emplace_back(cur);
      cur.clear();
      in_word = false;
    } else if (!space || in_word) {
      if (!in_word && maxsplit >= 0 && int64_t(out.size()) == maxsplit) {
        // the rest, as it is, from here
        std::string rest;
        for (size_t k = i; k < cs.size(); ++k) rest += cs[k];
        out.emplace_back(strip(rest, Value(), false, true));
        return out;
      }
      cur += cs[i];
      in_word = true;
    }
  }
  if (in_word) out.emplace_back(cur);
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) fail("replace(): empty search text");
  size_t pos = 0;
  for (int64_t n = 0; (count < 0 || n < count) && (pos = s.find(from, pos)) != std::string::npos; ++n) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// ---- arguments ----

// Argument `i` (positional) or `key` (keyword), or `def`.
Value arg(std::vector<Value>& args, KwArgs& kwargs, size_t i, const char* key, Value def = Value()) {
  if (i < args.size()) return args[i];
  for (auto& [k, v] : kwargs)
    if (k == key) return v;
  return def;
}

const std::string& need_string(const Value& v, const char* what) {
  if (!v.is_string()) fail(fmt::format("{} expects a string, got {}", what, v.type_name()));
  return v.as_string();
}

int64_t need_int(const Value& v, const char* what) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool();
  fail(fmt::format("{} expects an integer, got {}", what, v.type_name()));
}

// The attribute or key `path` ("a.b") of `v`, for filters that take `attribute=`.
Value attribute(const Value& v, const std::string& path) {
  Value cur = v;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (cur.is_dict()) cur = dict_get(cur.as_dict(), part);
    else if (cur.is_namespace()) cur = dict_get(cur.as_namespace().attrs, part);
    else if (cur.is_list() && !part.empty() && part.size() <= 18 && std::all_of(part.begin(), part.end(), ::isdigit))
      cur = subscript(cur, Value(int64_t(std::stoll(part))));
    else return Value(Undefined{part});
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

Value select_items(const Value& seq, std::vector<Value>& args, bool by_attr, bool keep) {
  // select(test, args...), selectattr(attr, test, args...) and their reject twins.
  size_t i = 0;
  std::string attr;
  if (by_attr) attr = need_string(args.size() > 0 ? args[0] : Value(), "selectattr()"), i = 1;
  std::string test = i < args.size() ? need_string(args[i], "select()") : "";
  std::vector<Value> test_args(args.begin() + std::min(args.size(), i + 1), args.end());
  List out;
  for (const Value& item : iterate(seq)) {
    const Value probe = by_attr ? attribute(item, attr) : item;
    const bool pass = test.empty() ? probe.truthy() : apply_test(test, probe, test_args);
    if (pass == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

}  // namespace

bool less(const Value& a, const Value& b) {
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) return a.as_number() < b.as_number();
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  fail(fmt::format("'<' is not supported between '{}' and '{}'", a.type_name(), b.type_name()));
}

// ---- containers ----

List iterate(const Value& v) {
  if (v.is_list()) return v.as_list();
  if (v.is_dict()) {
    List keys;
    for (const auto& [k, _] : v.as_dict()) keys.emplace_back(k);
    return keys;
  }
  if (v.is_string()) {
    List out;
    for (std::string_view c : characters(v.as_string())) out.emplace_back(std::string(c));
    return out;
  }
  if (v.is_undefined()) return {};  // Jinja iterates an undefined value as empty
  fail(fmt::format("'{}' object is not iterable", v.type_name()));
}

int64_t length(const Value& v) {
  if (v.is_string()) return int64_t(characters(v.as_string()).size());
  if (v.is_list()) return int64_t(v.as_list().size());
  if (v.is_dict()) return int64_t(v.as_dict().size());
  if (v.is_undefined()) return 0;
  fail(fmt::format("object of type '{}' has no len()", v.type_name()));
}

bool contains(const Value& container, const Value& x) {
  if (container.is_string()) return container.as_string().find(need_string(x, "'in <string>'")) != std::string::npos;
  if (container.is_list()) return std::any_of(container.as_list().begin(), container.as_list().end(), [&](const Value& e) { return e == x; });
  if (container.is_dict()) return x.is_string() && !dict_get(container.as_dict(), x.as_string()).is_undefined();
  if (container.is_undefined()) return false;
  fail(fmt::format("argument of type '{}' is not iterable", container.type_name()));
}

Value subscript(const Value& target, const Value& index) {
  if (target.is_dict()) {
    if (!index.is_string()) return Value(Undefined{index.str()});
    return dict_get(target.as_dict(), index.as_string());
  }
  if (target.is_namespace() && index.is_string()) return dict_get(target.as_namespace().attrs, index.as_string());
  if (target.is_list() || target.is_string()) {
    const List items = target.is_list() ? List() : iterate(target);
    const List& seq = target.is_list() ? target.as_list() : items;
    int64_t i = need_int(index, "an index");
    if (i < 0) i += int64_t(seq.size());
    if (i < 0 || i >= int64_t(seq.size())) return Value(Undefined{fmt::format("[{}]", index.str())});
    return seq[size_t(i)];
  }
  if (target.is_undefined()) fail(fmt::format("'{}' is undefined", target.as_undefined().name));
  fail(fmt::format("'{}' object is not subscriptable", target.type_name()));
}

Value slice(const Value& target, const Value& start, const Value& stop, const Value& step) {
  if (!target.is_list() && !target.is_string()) fail(fmt::format("cannot slice a '{}'", target.type_name()));
  const List seq = iterate(target);
  const int64_t n = int64_t(seq.size());
  const int64_t st = step.is_undefined() || step.is_none() ? 1 : need_int(step, "a slice step");
  if (st == 0) fail("slice step cannot be zero");
  auto bound = [&](const Value& v, int64_t def) {
    if (v.is_undefined() || v.is_none()) return def;
    int64_t i = need_int(v, "a slice index");
    if (i < 0) i += n;
    return st > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t b = bound(start, st > 0 ? 0 : n - 1), e = bound(stop, st > 0 ? n : -1);
  List out;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st) out.push_back(seq[size_t(i)]);
  if (target.is_list()) return Value(std::move(out));
  std::string s;
  for (const Value& c : out) s += c.as_string();
  return Value(std::move(s));
}

// ---- filters ----

Value apply_filter(const std::string& name, const Value& v, std::vector<Value>& args, KwArgs& kwargs) {
  if (name == "length" || name == "count") return Value(length(v));
  if (name == "tojson") return Value(v.to_json(int(need_int(arg(args, kwargs, 0, "indent", Value(0)), "tojson(indent)"))));
  if (name == "string") return Value(v.str());
  if (name == "safe") return v;
  if (name == "escape" || name == "e") return Value(html_escape(v.str()));
  if (name == "default" || name == "d") {
    const bool boolean = arg(args, kwargs, 1, "boolean", Value(false)).truthy();
    const bool use_default = boolean ? !v.truthy() : v.is_undefined();
    return use_default ? arg(args, kwargs, 0, "default_value", Value("")) : v;
  }
  if (name == "list") return Value(iterate(v));
  if (name == "first" || name == "last") {
    const List items = iterate(v);
    if (items.empty()) return Value(Undefined{name});
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    if (v.is_string()) return slice(v, Value(), Value(), Value(int64_t{-1}));
    List items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value(std::move(items));
  }
  if (name == "join") {
    const std::string sep = arg(args, kwargs, 0, "d", Value("")).str();
    const Value attr = arg(args, kwargs, 1, "attribute");
    std::string out;
    bool first = true;
    for (const Value& item : iterate(v)) {
      out += (first ? "" : sep) + (attr.is_string() ? attribute(item, attr.as_string()) : item).str();
      first = false;
    }
    return Value(std::move(out));
  }
  if (name == "items") {
    if (v.is_undefined()) return Value(List{});
    if (!v.is_dict()) fail(fmt::format("items expects a dict, got {}", v.type_name()));
    List out;
    for (const auto& [k, e] : v.as_dict()) out.emplace_back(List{Value(k), e});
    return Value(std::move(out));
  }
  if (name == "map") {
    const Value attr = arg(args, kwargs, 99, "attribute");
    List out;
    for (const Value& item : iterate(v)) {
      if (attr.is_string()) {
        out.push_back(attribute(item, attr.as_string()));
      } else {
        if (args.empty()) fail("map() needs a filter name or attribute=");
        std::vector<Value> rest(args.begin() + 1, args.end());
        KwArgs none;
        out.push_back(apply_filter(need_string(args[0], "map()"), item, rest, none));
      }
    }
    return Value(std::move(out));
  }
  if (name == "select" || name == "reject") return select_items(v, args, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") return select_items(v, args, true, name == "selectattr");
  if (name == "sort" || name == "unique") {
    List items = iterate(v);
    const Value attr = arg(args, kwargs, name == "sort" ? 2 : 1, "attribute");
    auto key = [&](const Value& x) { return attr.is_string() ? attribute(x, attr.as_string()) : x; };
    if (name == "unique") {
      List out;
      for (const Value& x : items)
        if (std::none_of(out.begin(), out.end(), [&](const Value& y) { return key(x) == key(y); })) out.push_back(x);
      return Value(std::move(out));
    }
    const bool reverse = arg(args, kwargs, 0, "reverse", Value(false)).truthy();
    std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
      return reverse ? less(key(b), key(a)) : less(key(a), key(b));
    });
    return Value(std::move(items));
  }
  if (name == "trim") return Value(strip(need_string(v, "trim"), arg(args, kwargs, 0, "chars"), true, true));
  if (name == "upper") return Value(change_case(need_string(v, "upper"), 'u'));
  if (name == "lower") return Value(change_case(need_string(v, "lower"), 'l'));
  if (name == "title") return Value(change_case(need_string(v, "title"), 't'));
  if (name == "capitalize") return Value(capitalize(need_string(v, "capitalize")));
  if (name == "replace") {
    return Value(replace_all(need_string(v, "replace"), need_string(arg(args, kwargs, 0, "old"), "replace()"),
                             need_string(arg(args, kwargs, 1, "new"), "replace()"),
                             need_int(arg(args, kwargs, 2, "count", Value(int64_t{-1})), "replace(count)")));
  }
  if (name == "indent") {
    const Value w = arg(args, kwargs, 0, "width", Value(int64_t{4}));
    const std::string pad = w.is_string() ? w.as_string() : std::string(size_t(need_int(w, "indent(width)")), ' ');
    const bool first = arg(args, kwargs, 1, "first", Value(false)).truthy();
    const bool blank = arg(args, kwargs, 2, "blank", Value(false)).truthy();
    const List lines = split(need_string(v, "indent"), Value("\n"), -1);
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i].as_string();
      if (i) out += "\n";
      if ((i > 0 || first) && (blank || !line.empty())) out += pad;
      out += line;
    }
    return Value(std::move(out));
  }
  if (name == "int") {
    if (v.is_int()) return v;
    if (v.is_float()) return Value(int64_t(v.as_number()));
    if (v.is_bool()) return Value(int64_t(v.as_bool()));
    try {
      return Value(int64_t(std::stoll(v.str())));
    } catch (const std::exception&) {
      return arg(args, kwargs, 0, "default", Value(int64_t{0}));
    }
  }
  if (name == "float") {
    if (v.is_number() || v.is_bool()) return Value(v.as_number());
    try {
      return Value(std::stod(v.str()));
    } catch (const std::exception&) {
      return arg(args, kwargs, 0, "default", Value(0.0));
    }
  }
  if (name == "abs") {
    if (v.is_int()) return Value(int64_t(std::llabs(v.as_int())));
    if (v.is_float()) return Value(std::fabs(v.as_number()));
    fail(fmt::format("abs expects a number, got {}", v.type_name()));
  }
  if (name == "round") {
    if (!v.is_number()) fail(fmt::format("round expects a number, got {}", v.type_name()));
    const double scale = std::pow(10.0, double(need_int(arg(args, kwargs, 0, "precision", Value(int64_t{0})), "round()")));
    return Value(std::nearbyint(v.as_number() * scale) / scale);
  }
  fail(fmt::format("no filter named '{}'", name));
}

// ---- tests ----

bool apply_test(const std::string& name, const Value& v, const std::vector<Value>& args) {
  auto need_arg = [&]() -> const Value& {
    if (args.empty()) fail(fmt::format("test '{}' needs an argument", name));
    return args[0];
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "sequence") return v.is_list() || v.is_string() || v.is_dict();
  if (name == "iterable") return v.is_list() || v.is_string() || v.is_dict();
  if (name == "callable") return v.is_function();
  if (name == "odd" || name == "even") return need_int(v, "odd/even") % 2 == (name == "odd" ? 1 : 0);
  if (name == "divisibleby") return need_int(v, "divisibleby") % need_int(need_arg(), "divisibleby()") == 0;
  if (name == "eq" || name == "equalto" || name == "==" || name == "sameas") return v == need_arg();
  if (name == "ne" || name == "!=") return !(v == need_arg());
  if (name == "lt" || name == "lessthan") return less(v, need_arg());
  if (name == "gt" || name == "greaterthan") return less(need_arg(), v);
  if (name == "le") return !less(need_arg(), v);
  if (name == "ge") return !less(v, need_arg());
  if (name == "in") return contains(need_arg(), v);
  if (name == "lower") return v.is_string() && change_case(v.as_string(), 'l') == v.as_string();
  if (name == "upper") return v.is_string() && change_case(v.as_string(), 'u') == v.as_string();
  fail(fmt::format("no test named '{}'", name));
}

// ---- methods ----

Value call_method(const Value& obj, const std::string& name, std::vector<Value>& args, KwArgs& kwargs, bool& found) {
  found = true;
  if (obj.is_string()) {
    const std::string& s = obj.as_string();
    if (name == "startswith" || name == "endswith") {
      const Value p = arg(args, kwargs, 0, "prefix");
      List options = p.is_list() ? p.as_list() : List{p};  // Python accepts a tuple of prefixes
      for (const Value& o : options) {
        const std::string& t = need_string(o, name.c_str());
        if (name == "startswith" ? s.starts_with(t) : s.ends_with(t)) return Value(true);
      }
      return Value(false);
    }
    if (name == "strip") return Value(strip(s, arg(args, kwargs, 0, "chars"), true, true));
    if (name == "lstrip") return Value(strip(s, arg(args, kwargs, 0, "chars"), true, false));
    if (name == "rstrip") return Value(strip(s, arg(args, kwargs, 0, "chars"), false, true));
    if (name == "split") {
      return Value(split(s, arg(args, kwargs, 0, "sep", Value(nullptr)),
                         need_int(arg(args, kwargs, 1, "maxsplit", Value(int64_t{-1})), "split(maxsplit)")));
    }
    if (name == "upper" || name == "lower" || name == "title") return Value(change_case(s, name[0]));
    if (name == "capitalize") return Value(capitalize(s));
    if (name == "replace") {
      return Value(replace_all(s, need_string(arg(args, kwargs, 0, "old"), "replace()"), need_string(arg(args, kwargs, 1, "new"), "replace()"),
                               need_int(arg(args, kwargs, 2, "count", Value(int64_t{-1})), "replace(count)")));
    }
    if (name == "find") {
      const size_t at = s.find(need_string(arg(args, kwargs, 0, "sub"), "find()"));
      return Value(at == std::string::npos ? int64_t{-1} : int64_t(characters(s.substr(0, at)).size()));
    }
    if (name == "count") {
      const std::string t = need_string(arg(args, kwargs, 0, "sub"), "count()");  // a copy: arg() returns a temporary
      return Value(int64_t(split(s, Value(t), -1).size()) - 1);
    }
    if (name == "join") {
      std::string out;
      bool first = true;
      for (const Value& item : iterate(arg(args, kwargs, 0, "iterable"))) {
        out += (first ? "" : s) + need_string(item, "join()");
        first = false;
      }
      return Value(std::move(out));
    }
    if (name == "isspace") return Value(!s.empty() && strip(s, Value(), true, true).empty());
  } else if (obj.is_dict()) {
    const Dict& d = obj.as_dict();
    if (name == "get") {
      const Value got = dict_get(d, need_string(arg(args, kwargs, 0, "key"), "get()"));
      return got.is_undefined() ? arg(args, kwargs, 1, "default", Value(nullptr)) : got;
    }
    if (name == "items") {
      List out;
      for (const auto& [k, e] : d) out.emplace_back(List{Value(k), e});
      return Value(std::move(out));
    }
    if (name == "keys" || name == "values") {
      List out;
      for (const auto& [k, e] : d) out.push_back(name == "keys" ? Value(k) : e);
      return Value(std::move(out));
    }
  }
  found = false;
  return Value(Undefined{name});
}

// ---- globals ----

Dict global_functions(std::vector<std::shared_ptr<Value::Namespace>>& namespaces) {
  Dict g;
  g.emplace_back("namespace", Value(Function([&namespaces](std::vector<Value>& args, KwArgs& kwargs) {
                   auto ns = std::make_shared<Value::Namespace>();
                   namespaces.push_back(ns);
                   for (const Value& a : args)
                     if (a.is_dict())
                       for (const auto& [k, v] : a.as_dict()) dict_set(ns->attrs, k, v);
                   for (auto& [k, v] : kwargs) dict_set(ns->attrs, k, v);
                   return Value(ns);
                 })));
  g.emplace_back("dict", Value(Function([](std::vector<Value>& args, KwArgs& kwargs) {
                   Dict d;
                   for (const Value& a : args)
                     if (a.is_dict()) d = a.as_dict();
                   for (auto& [k, v] : kwargs) dict_set(d, k, v);
                   return Value(std::move(d));
                 })));
  g.emplace_back("range", Value(Function([](std::vector<Value>& args, KwArgs&) {
                   if (args.empty() || args.size() > 3) fail("range() takes 1 to 3 arguments");
                   int64_t start = 0, stop, step = 1;
                   if (args.size() == 1) {
                     stop = need_int(args[0], "range()");
                   } else {
                     start = need_int(args[0], "range()");
                     stop = need_int(args[1], "range()");
                     if (args.size() == 3) step = need_int(args[2], "range()");
                   }
                   if (step == 0) fail("range() step must not be zero");
                   // Counted in unsigned arithmetic: start + k * step never passes stop, so no
                   // int64 overflow even for ranges near the ends of the integers.
                   uint64_t count = 0;
                   if (step > 0 && stop > start) count = (uint64_t(stop) - uint64_t(start) - 1) / uint64_t(step) + 1;
                   if (step < 0 && stop < start)
                     count = (uint64_t(start) - uint64_t(stop) - 1) / (uint64_t(0) - uint64_t(step)) + 1;
                   // A million items is far past any chat template and renders in well under a second.
                   constexpr uint64_t kMaxRangeItems = uint64_t(1) << 20;
                   if (count > kMaxRangeItems)
                     fail(fmt::format("range() of {} items is too large (the limit is {})", count, kMaxRangeItems));
                   List out;
                   out.reserve(size_t(count));
                   for (uint64_t k = 0; k < count; ++k) out.emplace_back(int64_t(uint64_t(start) + k * uint64_t(step)));
                   return Value(std::move(out));
                 })));
  g.emplace_back("raise_exception", Value(Function([](std::vector<Value>& args, KwArgs&) -> Value {
                   fail("the template raised an error: " + (args.empty() ? std::string() : args[0].str()));
                 })));
  g.emplace_back("strftime_now", Value(Function([](std::vector<Value>& args, KwArgs&) {
                   const std::time_t now = std::time(nullptr);
                   std::tm tm{};
                   localtime_r(&now, &tm);
                   char buf[256];
                   const size_t n = std::strftime(buf, sizeof buf, need_string(args.empty() ? Value() : args[0], "strftime_now()").c_str(), &tm);
                   return Value(std::string(buf, n));
                 })));
  return g;
}

}  // namespace skiff::text::jinja
