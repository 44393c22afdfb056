#pragma once
// Internal to framework/text: the values a Jinja template computes with (jinja.h is the
// public face). They follow Python's rules, since Hugging Face renders chat templates with
// Python's jinja2: truthiness, `str()` of a value, `==` across int and float, dicts that
// keep insertion order (a tool's JSON schema prints in the order it was written).

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace skiff::text::jinja {

class Value;
using List = std::vector<Value>;
/// A dict in insertion order. Chat-template dicts hold a handful of keys, so a linear
/// lookup beats a hash map.
using Dict = std::vector<std::pair<std::string, Value>>;

/// Keyword arguments of a call, in call order.
using KwArgs = std::vector<std::pair<std::string, Value>>;
/// A callable the template can call: globals (`namespace`, `range`, `raise_exception`) and
/// macros.
using Function = std::function<Value(std::vector<Value>& args, KwArgs& kwargs)>;

struct Undefined {
  std::string name;  // what was looked up, for the error when it is used as a value
};

/// One value: undefined, none, bool, int, float, string, list, dict, namespace or a
/// function. Lists, dicts and namespaces are shared like Python objects, so
/// `{% set ns.x = 1 %}` changes the namespace every name for it sees.
class Value {
 public:
  struct Namespace {
    Dict attrs;
  };
  using Storage = std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string, std::shared_ptr<List>,
                               std::shared_ptr<Dict>, std::shared_ptr<Namespace>, std::shared_ptr<Function>>;

  Value() : v_(Undefined{}) {}
  Value(Undefined u) : v_(std::move(u)) {}
  Value(std::nullptr_t) : v_(nullptr) {}
  Value(bool b) : v_(b) {}
  Value(int64_t i) : v_(i) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(List l) : v_(std::make_shared<List>(std::move(l))) {}
  Value(Dict d) : v_(std::make_shared<Dict>(std::move(d))) {}
  Value(std::shared_ptr<Namespace> ns) : v_(std::move(ns)) {}
  Value(Function f) : v_(std::make_shared<Function>(std::move(f))) {}

  /// From JSON (objects keep their key order when `ordered_json` parsed them).
  static Value from_json(const nlohmann::ordered_json& j);

  bool is_undefined() const { return std::holds_alternative<Undefined>(v_); }
  bool is_none() const { return std::holds_alternative<std::nullptr_t>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<std::shared_ptr<List>>(v_); }
  bool is_dict() const { return std::holds_alternative<std::shared_ptr<Dict>>(v_); }
  bool is_namespace() const { return std::holds_alternative<std::shared_ptr<Namespace>>(v_); }
  bool is_function() const { return std::holds_alternative<std::shared_ptr<Function>>(v_); }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_number() const { return is_int() ? double(as_int()) : is_bool() ? double(as_bool()) : std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  List& as_list() const { return *std::get<std::shared_ptr<List>>(v_); }
  Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(v_); }
  Namespace& as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(v_); }
  Function& as_function() const { return *std::get<std::shared_ptr<Function>>(v_); }
  const Undefined& as_undefined() const { return std::get<Undefined>(v_); }

  /// Python's bool(): false for undefined, none, false, 0, "", [] and {}.
  bool truthy() const;
  /// What `{{ value }}` prints: Python's str() (True, None, 1.5, ['a', 1], {'k': 'v'}); an
  /// undefined value prints nothing.
  std::string str() const;
  /// Python's repr() of strings inside containers ('a' quoted).
  std::string repr() const;
  /// The `tojson` filter: json.dumps(ensure_ascii=False) with ", " and ": " separators,
  /// or one item per line with `indent` > 0.
  std::string to_json(int indent = 0, int depth = 0) const;
  /// Python's type name, for error messages ("str", "list", "undefined").
  const char* type_name() const;

  /// Python's ==: 1 == 1.0, lists and dicts element by element.
  friend bool operator==(const Value& a, const Value& b);

 private:
  Storage v_;
};

/// The value of `key` in `d`, or undefined.
Value dict_get(const Dict& d, const std::string& key);
/// Sets `key` in `d`, keeping its place when it exists.
void dict_set(Dict& d, const std::string& key, Value v);

}  // namespace skiff::text::jinja
