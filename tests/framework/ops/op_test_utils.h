#pragma once
// Shared helpers for op tests: gradient checks and approximate comparisons.

#include <gtest/gtest.h>

#include "framework/autograd/gradcheck.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"

namespace skiff::testing {

/// Asserts the analytic gradient of fn matches central differences (inputs float64).
inline void expect_gradcheck(const autograd::TensorFn& fn, const std::vector<Tensor>& inputs,
                             autograd::GradcheckOptions opt = {}) {
  auto r = autograd::gradcheck(fn, inputs, opt);
  EXPECT_TRUE(r.ok) << r.message;
}

/// Asserts second-order gradients are right too (the backward is differentiable).
inline void expect_gradgradcheck(const autograd::TensorFn& fn, const std::vector<Tensor>& inputs,
                                 autograd::GradcheckOptions opt = {}) {
  auto r = autograd::gradgradcheck(fn, inputs, opt);
  EXPECT_TRUE(r.ok) << r.message;
}

/// Random float64 leaf requiring grad.
inline Tensor rand_leaf(const Shape& s, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Generator g(seed);
  return rand(s, DType::Float64, &g, lo, hi).set_requires_grad();
}

/// Element-wise |a - b| <= atol + rtol |b| over whole tensors of equal shape.
inline void expect_allclose(const Tensor& a, const Tensor& b, double atol = 1e-6, double rtol = 1e-5) {
  ASSERT_EQ(a.shape(), b.shape());
  auto va = contiguous(to(a, DType::Float64)).to_vector<double>();
  auto vb = contiguous(to(b, DType::Float64)).to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i)
    ASSERT_NEAR(va[i], vb[i], atol + rtol * std::abs(vb[i])) << "at flat index " << i;
}

}  // namespace skiff::testing
