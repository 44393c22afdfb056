#pragma once
/// \file module.h
/// nn::Module: the base of every layer and model (the torch.nn.Module analogue).
///
/// A module owns named parameters (trainable tensors), named buffers (state that
/// is saved but not trained, e.g. BatchNorm running statistics) and named child
/// modules. Modules are held by std::shared_ptr; children are registered in the
/// constructor with register_module(), which makes them visible to
/// parameters(), state_dict(), train()/eval(), to() and requires_grad_().
///
///   class Mlp : public Module {
///    public:
///     Mlp() {
///       fc1 = register_module("fc1", std::make_shared<Linear>(4, 8));
///       fc2 = register_module("fc2", std::make_shared<Linear>(8, 2));
///     }
///     std::string type_name() const override { return "Mlp"; }
///     Tensor forward(const Tensor& x) override { return (*fc2)(relu((*fc1)(x))); }
///     std::shared_ptr<Linear> fc1, fc2;
///   };
///
/// Identity of tensors. Parameters and buffers keep their TensorImpl for the
/// module's whole life: load_state_dict() copies values into them and to(dtype)
/// converts them in place. A layer may therefore keep a plain `Tensor weight`
/// handle next to the registry, and optimizers may keep the handles returned by
/// parameters() across dtype changes and checkpoint loads.
///
/// Names. Parameter and buffer names are dotted paths of child names:
/// "encoder.layers.0.attn.q_proj.weight". Order is registration order, depth
/// first (a module's own entries before its children's), which is the order
/// optimizers see and checkpoints list.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/core/dtype.h"
#include "framework/core/error.h"
#include "framework/tensor/tensor.h"

namespace skiff::nn {

/// What a non-strict load_state_dict() skipped.
struct LoadResult {
  std::vector<std::string> missing_keys;     ///< module entries absent from the dict
  std::vector<std::string> unexpected_keys;  ///< dict entries the module does not have
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module();

  /// Class name used in printing and error messages ("Linear", "Sequential").
  virtual std::string type_name() const;

  /// The single-tensor forward pass. The base implementation throws
  /// NotImplementedError: modules with other signatures (attention, RNNs) expose
  /// their own forward overloads instead.
  virtual Tensor forward(const Tensor& x);
  /// Calls forward(x); errors get "in <type_name>" context added.
  Tensor operator()(const Tensor& x);

  // ---- registration (called from constructors) --------------------------------

  /// Registers a trainable tensor under `name` (no dots, unique among this
  /// module's parameters, buffers and children). The tensor is detached from any
  /// autograd graph and marked requires_grad (float dtypes only).
  /// Returns a reference to the stored handle, valid for the module's life.
  /// \throws ValueError on an empty/dotted/duplicate name or an undefined tensor.
  Tensor& register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  /// Registers non-trainable state that belongs in state_dict() (running stats, ...).
  /// An undefined tensor is allowed and is skipped by named_buffers()/state_dict().
  Tensor& register_buffer(const std::string& name, Tensor t);
  /// Registers a child module; returns it unchanged for convenient assignment.
  /// \throws ValueError on a bad/duplicate name or a null module.
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    SKIFF_CHECK(m != nullptr, "{}.register_module: module '{}' is null", type_name(), name);
    add_child(name, std::static_pointer_cast<Module>(m));
    return m;
  }

  // ---- access -----------------------------------------------------------------

  /// Trainable tensors in registration order, own first, then each child's.
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// (dotted name, tensor) pairs in the same order as parameters().
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  /// Direct children in registration order.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  std::vector<std::shared_ptr<Module>> children() const;
  /// This module (name "") and every descendant, depth first. The pointers are
  /// owned by the tree and valid while this module lives.
  std::vector<std::pair<std::string, Module*>> named_modules();
  /// Own parameter by name. \throws ValueError naming the known parameters.
  Tensor& param(const std::string& name);
  /// Own buffer by name. \throws ValueError naming the known buffers.
  Tensor& buffer(const std::string& name);
  /// Direct child by name. \throws ValueError naming the known children.
  std::shared_ptr<Module> child(const std::string& name) const;
  /// Total number of parameter elements (trainable_only: only requires_grad ones).
  int64_t num_parameters(bool trainable_only = false) const;

  // ---- state ------------------------------------------------------------------

  /// Parameters and buffers by dotted name. The tensors share storage with the
  /// module (no copy) and carry no autograd history.
  std::map<std::string, Tensor> state_dict() const;
  /// Copies values from `sd` into the module's tensors in place (converting dtype
  /// when the dict's differs). With strict, any missing key, unexpected key or
  /// shape mismatch throws one ValueError listing all three groups (with shapes);
  /// without strict, missing/unexpected keys are skipped and reported in the
  /// result, but a shape mismatch still throws (the copy would be meaningless).
  LoadResult load_state_dict(const std::map<std::string, Tensor>& sd, bool strict = true);

  // ---- modes and conversions ------------------------------------------------------

  /// Sets training mode here and in every descendant (Dropout, BatchNorm read it).
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Drops the accumulated .grad of every parameter.
  void zero_grad();
  /// Converts every floating parameter and buffer to `dtype` in place (integer
  /// buffers such as BatchNorm's num_batches_tracked keep their dtype). Gradients
  /// are dropped. \throws TypeError if dtype is not a floating type.
  void to(DType dtype);
  /// Sets requires_grad on every parameter (false = freeze, true = unfreeze).
  void requires_grad_(bool on);
  /// Calls fn on this module and every descendant, depth first.
  void apply(const std::function<void(Module&)>& fn);

  /// Tree rendering: "Sequential(\n  (0): Linear(in_features=4, ...)\n)".
  std::string str() const;

 protected:
  /// One-line summary of hyper-parameters shown by str() ("in_features=4, ...").
  virtual std::string extra_repr() const { return {}; }
  /// Hook for modules that cache mode-dependent state (default: nothing).
  virtual void on_train_changed() {}

 private:
  struct Entry {
    std::string name;
    std::unique_ptr<Tensor> tensor;  // unique_ptr: references stay valid as entries grow
  };
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  void check_new_name(const std::string& name, const char* what) const;
  void collect(const std::string& prefix, bool params, bool recurse,
               std::vector<std::pair<std::string, Tensor>>& out) const;
  void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out);
  void str_into(std::string& out, int indent) const;

  bool training_ = true;
  std::vector<Entry> params_;
  std::vector<Entry> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

/// Shared-pointer alias used by containers and model code.
using ModulePtr = std::shared_ptr<Module>;

}  // namespace skiff::nn
