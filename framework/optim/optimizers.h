#pragma once
/// \file optimizers.h
/// First-order optimizers with PyTorch's update formulas (torch.optim, 2.x, single-tensor path).
///
/// Each takes a list of parameters or a list of ParamGroups; a group's options override
/// the defaults given here by the option names in quotes ("lr", "weight_decay", ...).
/// Notation: g = gradient, p = parameter, t = step count (starting at 1).

#include "framework/optim/optimizer.h"

namespace skiff::optim {

/// SGD: g += wd*p; with momentum: b = g (first step) else b = mu*b + (1-dampening)*g;
/// g = nesterov ? g + mu*b : b; p -= lr*g. maximize negates g first.
/// State: "momentum_buffer" (only when momentum != 0).
struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;
  Options to_map() const;
};

class SGD : public Optimizer {
 public:
  /// \throws ValueError for lr/momentum/weight_decay < 0, or nesterov without momentum or with dampening.
  SGD(std::vector<Tensor> params, SGDOptions o = {}) : SGD(single_group(std::move(params)), o) {}
  SGD(std::vector<ParamGroup> groups, SGDOptions defaults);

 protected:
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) override;
  void validate(const ParamGroup& group) const override;
};

/// Adam: g += wd*p (L2, coupled); m = lerp(m, g, 1-b1); v = b2*v + (1-b2)*g^2;
/// amsgrad: vmax = max(vmax, v), use vmax for v;
/// p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
/// AdamW: same with decoupled decay p *= 1 - lr*wd instead of g += wd*p.
/// State: "exp_avg", "exp_avg_sq", ("max_exp_avg_sq"), step.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;
  bool maximize = false;
  Options to_map() const;
};

class Adam : public Optimizer {
 public:
  /// \throws ValueError for lr/eps/weight_decay < 0 or betas outside [0, 1).
  Adam(std::vector<Tensor> params, AdamOptions o = {}) : Adam(single_group(std::move(params)), o) {}
  Adam(std::vector<ParamGroup> groups, AdamOptions defaults) : Adam(std::move(groups), defaults, false) {}

 protected:
  Adam(std::vector<ParamGroup> groups, AdamOptions defaults, bool decoupled);
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) override;
  void validate(const ParamGroup& group) const override;

 private:
  bool decoupled_;
};

/// AdamW (decoupled weight decay). PyTorch's default weight_decay is 1e-2.
class AdamW : public Adam {
 public:
  static AdamOptions default_options() {
    AdamOptions o;
    o.weight_decay = 1e-2;
    return o;
  }
  AdamW(std::vector<Tensor> params, AdamOptions o = default_options())
      : AdamW(single_group(std::move(params)), o) {}
  AdamW(std::vector<ParamGroup> groups, AdamOptions defaults) : Adam(std::move(groups), defaults, true) {}
};

/// RMSprop: g += wd*p; v = alpha*v + (1-alpha)*g^2;
/// centered: ga = lerp(ga, g, 1-alpha); avg = sqrt(v - ga^2) + eps; else avg = sqrt(v) + eps;
/// momentum > 0: b = mu*b + g/avg; p -= lr*b; else p -= lr*g/avg.
/// State: "square_avg", ("grad_avg"), ("momentum_buffer"), step.
struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool maximize = false;
  Options to_map() const;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions o = {}) : RMSprop(single_group(std::move(params)), o) {}
  RMSprop(std::vector<ParamGroup> groups, RMSpropOptions defaults);

 protected:
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) override;
  void validate(const ParamGroup& group) const override;
};

/// Adagrad: g += wd*p; clr = lr / (1 + (t-1)*lr_decay); s += g^2; p -= clr * g/(sqrt(s) + eps).
/// State: "sum" (initialised to initial_accumulator_value), step.
struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  double eps = 1e-10;
  bool maximize = false;
  Options to_map() const;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions o = {}) : Adagrad(single_group(std::move(params)), o) {}
  Adagrad(std::vector<ParamGroup> groups, AdagradOptions defaults);

 protected:
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) override;
  void validate(const ParamGroup& group) const override;
};

}  // namespace skiff::optim
