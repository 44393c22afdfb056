#include "framework/text/jinja_value.h"

#include <fmt/format.h>

#include <cmath>

#include "framework/core/error.h"

namespace skiff::text::jinja {

Value Value::from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value(nullptr);
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: return Value(int64_t(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List l;
      l.reserve(j.size());
      for (const auto& e : j) l.push_back(from_json(e));
      return Value(std::move(l));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      d.reserve(j.size());
      for (const auto& [k, e] : j.items()) d.emplace_back(k, from_json(e));
      return Value(std::move(d));
    }
    default: return Value();  // binary and discarded values do not occur in parsed JSON
  }
}

bool Value::truthy() const {
  if (is_undefined() || is_none()) return false;
  if (is_bool()) return as_bool();
  if (is_int()) return as_int() != 0;
  if (is_float()) return as_number() != 0.0;
  if (is_string()) return !as_string().empty();
  if (is_list()) return !as_list().empty();
  if (is_dict()) return !as_dict().empty();
  return true;  // namespaces and functions
}

namespace {

// Python's repr() of a float: the shortest text that reads back, always with a '.' or
// an exponent so it does not read as an int.
std::string float_text(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string python_quote(const std::string& s) {
  // Python picks single quotes unless the text has one and no double quote.
  const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == q) out += std::string("\\") + q;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out + q;
}

}  // namespace

std::string Value::repr() const {
  if (is_string()) return python_quote(as_string());
  return str();
}

std::string Value::str() const {
  // Namespaces are shared, so `{% set ns.x = ns %}` makes one contain itself; Python prints
  // the repeated part as "..." and so does this, past a nesting depth no real data reaches.
  static thread_local int depth = 0;
  constexpr int kMaxPrintDepth = 64;
  if ((is_list() || is_dict() || is_namespace()) && depth >= kMaxPrintDepth) return "...";
  struct Nest {
    Nest() { ++depth; }
    ~Nest() { --depth; }
  } nest;
  if (is_undefined()) return "";
  if (is_none()) return "None";
  if (is_bool()) return as_bool() ? "True" : "False";
  if (is_int()) return std::to_string(as_int());
  if (is_float()) return float_text(as_number());
  if (is_string()) return as_string();
  if (is_list()) {
    std::string out = "[";
    for (size_t i = 0; i < as_list().size(); ++i) out += (i ? ", " : "") + as_list()[i].repr();
    return out + "]";
  }
  if (is_dict() || is_namespace()) {
    const Dict& d = is_dict() ? as_dict() : as_namespace().attrs;
    std::string out = is_dict() ? "{" : "<Namespace {";
    for (size_t i = 0; i < d.size(); ++i) out += (i ? ", " : "") + python_quote(d[i].first) + ": " + d[i].second.repr();
    return out + (is_dict() ? "}" : "}>");
  }
  return "<function>";
}

std::string Value::to_json(int indent, int depth) const {
  if (depth > 64) SKIFF_THROW(ValueError, "tojson: a value nested deeper than 64 levels (a namespace inside itself?)");
  if (is_undefined() || is_none()) return "null";
  if (is_bool()) return as_bool() ? "true" : "false";
  if (is_int()) return std::to_string(as_int());
  if (is_float()) {
    const double d = as_number();
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    return float_text(d);
  }
  if (is_string()) return json_string(as_string());
  const std::string pad = indent > 0 ? "\n" + std::string(size_t(indent) * size_t(depth + 1), ' ') : "";
  const std::string close_pad = indent > 0 ? "\n" + std::string(size_t(indent) * size_t(depth), ' ') : "";
  const std::string sep = indent > 0 ? "," : ", ";
  if (is_list()) {
    if (as_list().empty()) return "[]";
    std::string out = "[";
    for (size_t i = 0; i < as_list().size(); ++i) out += (i ? sep : "") + pad + as_list()[i].to_json(indent, depth + 1);
    return out + close_pad + "]";
  }
  if (is_dict() || is_namespace()) {
    const Dict& d = is_dict() ? as_dict() : as_namespace().attrs;
    if (d.empty()) return "{}";
    std::string out = "{";
    for (size_t i = 0; i < d.size(); ++i)
      out += (i ? sep : "") + pad + json_string(d[i].first) + ": " + d[i].second.to_json(indent, depth + 1);
    return out + close_pad + "}";
  }
  return "null";  // functions have no JSON form
}

const char* Value::type_name() const {
  if (is_undefined()) return "undefined";
  if (is_none()) return "NoneType";
  if (is_bool()) return "bool";
  if (is_int()) return "int";
  if (is_float()) return "float";
  if (is_string()) return "str";
  if (is_list()) return "list";
  if (is_dict()) return "dict";
  if (is_namespace()) return "Namespace";
  return "function";
}

bool operator==(const Value& a, const Value& b) {
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
    if (a.is_float() || b.is_float()) return a.as_number() == b.as_number();
    return int64_t(a.as_number()) == int64_t(b.as_number());
  }
  if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
  if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
  if (a.is_undefined() || b.is_undefined()) return a.is_undefined() && b.is_undefined();
  if (a.is_list() && b.is_list()) {
    const List &x = a.as_list(), &y = b.as_list();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!(x[i] == y[i])) return false;
    return true;
  }
  if (a.is_dict() && b.is_dict()) {
    const Dict &x = a.as_dict(), &y = b.as_dict();
    if (x.size() != y.size()) return false;
    for (const auto& [k, v] : x)
      if (!(dict_get(y, k) == v)) return false;
    return true;
  }
  return false;  // different types, or namespaces and functions (compared by identity in Python)
}

Value dict_get(const Dict& d, const std::string& key) {
  for (const auto& [k, v] : d)
    if (k == key) return v;
  return Value(Undefined{key});
}

void dict_set(Dict& d, const std::string& key, Value v) {
  for (auto& [k, old] : d)
    if (k == key) {
      old = std::move(v);
      return;
    }
  d.emplace_back(key, std::move(v));
}

}  // namespace skiff::text::jinja
