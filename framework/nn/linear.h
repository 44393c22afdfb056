#pragma once
/// \file linear.h
/// Linear, Identity, Flatten and Dropout.

#include <string>

#include "framework/core/rng.h"
#include "framework/nn/module.h"

namespace skiff::nn {

/// y = x W^T + b.
///   x: [*, in_features] -> [*, out_features]; weight [out, in]; bias [out].
/// Initialization (PyTorch's): weight kaiming_uniform(a = sqrt(5)), i.e.
/// U(-1/sqrt(in), 1/sqrt(in)); bias U(-1/sqrt(in), 1/sqrt(in)). Drawn from `gen`
/// (default generator when null). Parameters are float32; use to() for others.
/// \throws ValueError for non-positive sizes; forward throws ShapeError when the
/// last dim of x is not in_features.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr);
  std::string type_name() const override { return "Linear"; }
  Tensor forward(const Tensor& x) override;
  /// Re-draws weight and bias with the default initialization.
  void reset_parameters(Generator* gen = nullptr);
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

  Tensor weight;  ///< [out, in]
  Tensor bias;    ///< [out], undefined when built without bias

 protected:
  std::string extra_repr() const override;

 private:
  int64_t in_, out_;
};

/// Returns its input unchanged (a placeholder in configurable models).
class Identity : public Module {
 public:
  std::string type_name() const override { return "Identity"; }
  Tensor forward(const Tensor& x) override { return x; }
};

/// Flattens dims start_dim..end_dim into one (default: all but the batch dim).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_(start_dim), end_(end_dim) {}
  std::string type_name() const override { return "Flatten"; }
  Tensor forward(const Tensor& x) override;

 private:
  int64_t start_, end_;
};

/// In training mode zeroes each element with probability p and scales the rest
/// by 1 / (1 - p); in eval mode returns x. Draws come from `gen` (default
/// generator when null), which must outlive the module.
/// \throws ValueError unless 0 <= p <= 1.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  std::string type_name() const override { return "Dropout"; }
  Tensor forward(const Tensor& x) override;
  double p() const { return p_; }

 protected:
  std::string extra_repr() const override;

 private:
  double p_;
  Generator* gen_;
};

}  // namespace skiff::nn
