#pragma once
/// \file gradcheck.h
/// Finite-difference checks of analytic gradients (use float64 inputs).

#include <functional>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::autograd {

struct GradcheckOptions {
  double eps = 1e-6;   ///< central-difference step
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  std::string message;  ///< first mismatch: input, element, analytic vs numeric
};

using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;

/// Compares the Jacobian of fn (one output, any shape) w.r.t. every input that
/// requires grad against central differences.
GradcheckResult gradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt = {});

/// Second order: checks the gradient of (v . d fn / d inputs) for a fixed random v,
/// i.e. that every backward formula is itself correctly differentiable.
GradcheckResult gradgradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs,
                              const GradcheckOptions& opt = {});

}  // namespace skiff::autograd
