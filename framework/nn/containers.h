#pragma once
/// \file containers.h
/// Module containers: Sequential (a chain), ModuleList (an indexed list) and
/// ModuleDict (a name -> module map). Their entries are registered children, so
/// parameters, state_dict keys ("0.weight", "blocks.3.fc.bias"), train/eval and
/// to(dtype) reach them.

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "framework/nn/module.h"

namespace skiff::nn {

/// Runs its children in order: y = m_{n-1}(...m_1(m_0(x))). Children are named "0", "1", ...
class Sequential : public Module {
 public:
  Sequential() = default;
  /// \throws ValueError if any module is null.
  Sequential(std::initializer_list<ModulePtr> modules);
  explicit Sequential(const std::vector<ModulePtr>& modules);
  std::string type_name() const override { return "Sequential"; }
  /// Appends a module (named by its index).
  void push_back(ModulePtr m);
  int64_t size() const { return int64_t(modules_.size()); }
  /// Module i (negative counts from the end). \throws IndexError out of range.
  ModulePtr operator[](int64_t i) const;
  /// Chains forward through every child; an empty Sequential returns x.
  Tensor forward(const Tensor& x) override;

 private:
  std::vector<ModulePtr> modules_;
};

/// An indexed list of modules without a forward of its own (the model iterates it).
/// Children are named "0", "1", ...
class ModuleList : public Module {
 public:
  ModuleList() = default;
  ModuleList(std::initializer_list<ModulePtr> modules);
  explicit ModuleList(const std::vector<ModulePtr>& modules);
  std::string type_name() const override { return "ModuleList"; }
  void push_back(ModulePtr m);
  int64_t size() const { return int64_t(modules_.size()); }
  /// Module i (negative counts from the end). \throws IndexError out of range.
  ModulePtr operator[](int64_t i) const;
  /// Module i cast to M. \throws TypeError if it is not an M.
  template <class M>
  std::shared_ptr<M> at(int64_t i) const {
    auto m = std::dynamic_pointer_cast<M>((*this)[i]);
    SKIFF_CHECK_DTYPE(m != nullptr, "ModuleList.at: entry {} is a {}, not the requested type", i,
                      (*this)[i]->type_name());
    return m;
  }
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
};

/// Named modules in insertion order, without a forward of its own.
class ModuleDict : public Module {
 public:
  ModuleDict() = default;
  ModuleDict(std::initializer_list<std::pair<std::string, ModulePtr>> items);
  std::string type_name() const override { return "ModuleDict"; }
  /// Adds a module. \throws ValueError on a duplicate or dotted key.
  void insert(const std::string& key, ModulePtr m);
  bool contains(const std::string& key) const;
  /// \throws ValueError naming the known keys.
  ModulePtr operator[](const std::string& key) const { return child(key); }
  std::vector<std::string> keys() const;
  int64_t size() const { return int64_t(named_children().size()); }
};

}  // namespace skiff::nn
