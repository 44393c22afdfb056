#pragma once
/// \file registry.h
/// Registry<T>: a name -> factory table filled by static registrars.
///
/// Suites create child registries with a scope and a parent: a lookup of "DBHead"
/// in the ocr registry tries ocr first, then the framework registry.

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace skiff {

/// Closest candidate by edit distance, or "" if nothing is close. Used for
/// "did you mean ...?" hints in registry and config errors.
std::string closest_match(const std::string& key, const std::vector<std::string>& candidates);

template <typename Value>
class Registry {
 public:
  explicit Registry(std::string scope, Registry* parent = nullptr) : scope_(std::move(scope)), parent_(parent) {}

  void add(const std::string& name, Value v) {
    SKIFF_CHECK(!entries_.count(name), "registry '{}': '{}' is registered twice", scope_, name);
    entries_.emplace(name, std::move(v));
  }
  bool contains(const std::string& name) const {
    return entries_.count(name) || (parent_ && parent_->contains(name));
  }
  /// \throws ValueError naming the registry, with a "did you mean" hint.
  const Value& get(const std::string& name) const {
    if (auto it = entries_.find(name); it != entries_.end()) return it->second;
    if (parent_ && parent_->contains(name)) return parent_->get(name);
    auto all = names();
    auto hint = closest_match(name, all);
    SKIFF_THROW(ValueError, "registry '{}': no entry named '{}'{}", scope_, name,
                hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
  }
  /// Names in this registry and its parents, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    if (parent_) out = parent_->names();
    for (const auto& [k, v] : entries_) out.push_back(k);
    std::sort(out.begin(), out.end());
    return out;
  }
  const std::string& scope() const { return scope_; }

 private:
  std::string scope_;
  Registry* parent_;
  std::map<std::string, Value> entries_;
};

}  // namespace skiff
