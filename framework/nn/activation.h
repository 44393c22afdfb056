#pragma once
/// \file activation.h
/// Every element-wise activation of the op set as a parameter-free Module, plus
/// Softmax/LogSoftmax over a dimension. Each forward accepts any shape and any
/// floating dtype and returns the same shape; see framework/ops/elementwise/unary.h
/// and framework/ops/nn/norm.h for the formulas and the errors they throw.

#include <string>

#include "framework/nn/module.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/nn/norm.h"

namespace skiff::nn {

/// max(x, 0)
class ReLU : public Module {
 public:
  std::string type_name() const override { return "ReLU"; }
  Tensor forward(const Tensor& x) override { return relu(x); }
};

/// x if x > 0 else negative_slope * x
class LeakyReLU : public Module {
 public:
  explicit LeakyReLU(double negative_slope = 0.01) : negative_slope_(negative_slope) {}
  std::string type_name() const override { return "LeakyReLU"; }
  Tensor forward(const Tensor& x) override { return leaky_relu(x, negative_slope_); }
  double negative_slope() const { return negative_slope_; }

 protected:
  std::string extra_repr() const override;

 private:
  double negative_slope_;
};

/// x * Phi(x); with tanh_approximation the tanh formula of Hendrycks & Gimpel
/// (PyTorch approximate="tanh").
class GELU : public Module {
 public:
  explicit GELU(bool tanh_approximation = false) : tanh_(tanh_approximation) {}
  std::string type_name() const override { return "GELU"; }
  Tensor forward(const Tensor& x) override { return gelu(x, tanh_); }

 protected:
  std::string extra_repr() const override { return tanh_ ? "approximate=tanh" : ""; }

 private:
  bool tanh_;
};

/// x * sigmoid(x) (a.k.a. swish)
class SiLU : public Module {
 public:
  std::string type_name() const override { return "SiLU"; }
  Tensor forward(const Tensor& x) override { return silu(x); }
};

class Sigmoid : public Module {
 public:
  std::string type_name() const override { return "Sigmoid"; }
  Tensor forward(const Tensor& x) override { return sigmoid(x); }
};

class Tanh : public Module {
 public:
  std::string type_name() const override { return "Tanh"; }
  Tensor forward(const Tensor& x) override { return tanh(x); }
};

/// x * relu6(x + 3) / 6
class Hardswish : public Module {
 public:
  std::string type_name() const override { return "Hardswish"; }
  Tensor forward(const Tensor& x) override { return hardswish(x); }
};

/// relu6(x + 3) / 6
class Hardsigmoid : public Module {
 public:
  std::string type_name() const override { return "Hardsigmoid"; }
  Tensor forward(const Tensor& x) override { return hardsigmoid(x); }
};

/// log(1 + exp(beta x)) / beta, linear above beta x > threshold.
class Softplus : public Module {
 public:
  explicit Softplus(double beta = 1.0, double threshold = 20.0) : beta_(beta), threshold_(threshold) {}
  std::string type_name() const override { return "Softplus"; }
  Tensor forward(const Tensor& x) override { return softplus(x, beta_, threshold_); }

 protected:
  std::string extra_repr() const override;

 private:
  double beta_, threshold_;
};

/// min(max(x, 0), 6)
class ReLU6 : public Module {
 public:
  std::string type_name() const override { return "ReLU6"; }
  Tensor forward(const Tensor& x) override { return relu6(x); }
};

/// Softmax over `dim` (negative counts from the end).
class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : dim_(dim) {}
  std::string type_name() const override { return "Softmax"; }
  Tensor forward(const Tensor& x) override { return softmax(x, dim_); }

 protected:
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

/// log(softmax(x, dim)), computed stably.
class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim) : dim_(dim) {}
  std::string type_name() const override { return "LogSoftmax"; }
  Tensor forward(const Tensor& x) override { return log_softmax(x, dim_); }

 protected:
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

}  // namespace skiff::nn
