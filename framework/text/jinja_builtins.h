#pragma once
// Internal to framework/text: Jinja's filters, tests, global functions and the Python
// methods templates call on strings, dicts and lists (`content.strip()`,
// `message.get('x')`), with Python's results. Failures throw RenderError; the renderer adds
// the template name and line.

#include <stdexcept>
#include <string>
#include <vector>

#include "framework/text/jinja_value.h"

namespace skiff::text::jinja {

struct RenderError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// `operand | name(args, kwargs)`.
Value apply_filter(const std::string& name, const Value& operand, std::vector<Value>& args, KwArgs& kwargs);
/// `operand is name(args)`.
bool apply_test(const std::string& name, const Value& operand, const std::vector<Value>& args);
/// `object.name(args, kwargs)` for str, dict and list methods; sets `found` false (and
/// returns undefined) when `object` has no such method.
Value call_method(const Value& object, const std::string& name, std::vector<Value>& args, KwArgs& kwargs, bool& found);
/// The global functions: namespace, range, dict, raise_exception, strftime_now.
/// The global functions of one render. Every namespace() it creates is added to `namespaces`:
/// they can hold each other (`{% set ns.self = ns %}`), a cycle reference counting never
/// frees, so the render empties them when it ends.
Dict global_functions(std::vector<std::shared_ptr<Value::Namespace>>& namespaces);

/// Python's a < b: numbers with numbers, strings with strings (for <, >, sort, tests).
bool less(const Value& a, const Value& b);
/// Python's `x in container` (substring, list item, dict key).
bool contains(const Value& container, const Value& x);
/// The items a for loop walks: a list's items, a dict's keys, a string's characters.
List iterate(const Value& v);
/// Python's len(): characters of a string, items of a list or dict.
int64_t length(const Value& v);
/// s[index] and s[start:stop:step] with Python's negative indices, on lists and strings
/// (strings by character, not byte).
Value subscript(const Value& target, const Value& index);
Value slice(const Value& target, const Value& start, const Value& stop, const Value& step);

}  // namespace skiff::text::jinja
