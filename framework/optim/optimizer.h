#pragma once
/// \file optimizer.h
/// Optimizer base: parameter groups with per-group hyper-parameters, per-parameter
/// state buffers, zero_grad(), and a flat state_dict for checkpoints.
///
/// Parameters are CPU leaf tensors of a floating dtype. step() updates them in
/// place (writing through their storage under NoGradGuard, bumping the storage
/// version so autograd notices tensors saved for backward that changed). Updates
/// are element-wise and reductions run serially in double, so the same inputs give
/// bit-identical results for any thread count.
///
/// Compute precision: float64 parameters are updated in float64, every other
/// floating dtype in float32 (fp16/bf16 parameters keep float32 state buffers and
/// are rounded back after each step).
///
/// State-dict key scheme (OptimizerState):
///   tensors  "state.<i>.<buffer>"        per-parameter buffer, i = index of the parameter
///                                          counting through all groups in order
///                                          (e.g. "state.0.exp_avg", "state.3.momentum_buffer")
///   scalars  "state.<i>.step"            per-parameter step count (when the optimizer keeps one)
///            "param_groups.<g>.<option>" group hyper-parameters ("param_groups.0.lr")
///            "param_groups.<g>.num_params"
///            "num_groups"
///   Optimizers with global state (L-BFGS) add their own "<name>.*" keys.
/// to_tensor_map() folds the scalars into the tensor map as 0-d float64 tensors
/// under "scalars.<key>" so one safetensors file can hold everything.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::nn {
class Module;
}

namespace skiff::optim {

/// Hyper-parameters by name. Booleans are stored as 0/1.
using Options = std::map<std::string, double>;

/// A set of parameters sharing hyper-parameters.
struct ParamGroup {
  std::vector<Tensor> params;
  Options options;  ///< missing keys are filled from the optimizer's defaults

  ParamGroup() = default;
  ParamGroup(std::vector<Tensor> p, Options o = {}) : params(std::move(p)), options(std::move(o)) {}
  /// Value of option `name`. \throws ValueError naming the known options.
  double get(const std::string& name) const;
  void set(const std::string& name, double v) { options[name] = v; }
};

/// Serialised optimizer (or scheduler) state; see the key scheme in the file comment.
struct OptimizerState {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, double> scalars;

  /// Tensors plus scalars as 0-d float64 tensors under "scalars.<key>".
  std::map<std::string, Tensor> to_tensor_map() const;
  /// Inverse of to_tensor_map(). \throws ValueError if a "scalars." entry is not a one-element tensor.
  static OptimizerState from_tensor_map(const std::map<std::string, Tensor>& m);
};

/// Per-parameter state: named buffers plus a step counter.
struct ParamState {
  std::map<std::string, Tensor> buffers;
  int64_t step = 0;
  bool initialized() const { return step > 0 || !buffers.empty(); }
};

/// Recomputes the loss and the gradients (zero_grad + forward + backward) and returns the loss.
using Closure = std::function<double()>;

class Optimizer {
 public:
  /// \param groups    parameter groups (each non-empty; no tensor may appear twice)
  /// \param defaults  every hyper-parameter the optimizer knows, with its default;
  ///                  a group option not in `defaults` is rejected (catches typos).
  /// \throws ValueError / TypeError for empty groups, duplicates, non-float or non-CPU parameters.
  Optimizer(std::vector<ParamGroup> groups, Options defaults, std::string name);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// One update from the current .grad of every parameter (parameters without a grad are skipped).
  /// If a closure is given it is called first (under grad mode) and its loss returned.
  virtual double step(const Closure& closure = nullptr);

  /// Clears gradients: set_to_none drops them, otherwise they are filled with zeros.
  void zero_grad(bool set_to_none = true);

  /// Adds a group (options filled from the defaults).
  void add_param_group(ParamGroup group);

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const Options& defaults() const { return defaults_; }
  const std::string& name() const { return name_; }
  /// Sets option "lr" of every group.
  void set_lr(double lr);

  /// State of parameter `index` (flat index across groups).
  ParamState& state(int64_t index);
  int64_t num_params() const;

  virtual OptimizerState state_dict() const;
  /// Restores buffers, step counts and group hyper-parameters. The optimizer must have
  /// been built over the same parameter structure.
  /// \throws ValueError on a group/parameter count mismatch, ShapeError on a buffer shape mismatch.
  virtual void load_state_dict(const OptimizerState& sd);

 protected:
  /// Updates one parameter. `param` and `grad` are contiguous compute-dtype tensors
  /// (float32 or float64; writes to `param` reach the real parameter), `st` its state.
  virtual void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) = 0;
  /// Per-group validation of hyper-parameters. \throws ValueError.
  virtual void validate(const ParamGroup& group) const {}

  std::vector<ParamGroup> groups_;
  Options defaults_;
  std::string name_;
  std::vector<ParamState> state_;  ///< flat, in group order
  bool validated_ = false;
};

/// Dtype used for updates and state buffers of a parameter of dtype `t`.
DType compute_dtype(DType t);
/// Zero tensor shaped like `p` in its compute dtype (state-buffer initialiser).
Tensor zeros_like_state(const Tensor& p);

/// One group holding `params`.
inline std::vector<ParamGroup> single_group(std::vector<Tensor> params) {
  return {ParamGroup(std::move(params))};
}
/// Trainable parameters of a module as one group.
std::vector<ParamGroup> module_group(const nn::Module& m);

}  // namespace skiff::optim
