#pragma once
// Helpers for nn tests: comparisons and a gradient check over a module's
// parameters and inputs (float64).

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/nn/module.h"
#include "framework/ops/ops.h"

namespace skiff::nn::testing {

inline std::vector<double> values(const Tensor& t) { return contiguous(to(t, DType::Float64)).to_vector<double>(); }

inline void expect_close(const Tensor& a, const Tensor& b, double atol = 1e-5, double rtol = 1e-4) {
  ASSERT_EQ(a.shape(), b.shape());
  auto va = values(a), vb = values(b);
  for (size_t i = 0; i < va.size(); ++i)
    ASSERT_NEAR(va[i], vb[i], atol + rtol * std::abs(vb[i])) << "at flat index " << i;
}

inline Tensor rand64(const Shape& s, uint64_t seed, bool requires_grad = false) {
  Generator g(seed);
  Tensor t = rand(s, DType::Float64, &g, -1.0, 1.0);
  if (requires_grad) t.set_requires_grad();
  return t;
}

/// Checks d<v, fn()>/d(theta) for every float64 leaf theta in `leaves` (module
/// parameters and inputs) against central differences, for a fixed random v.
/// Perturbs the leaves' data in place (they must be contiguous float64).
inline void expect_module_gradcheck(const std::function<Tensor()>& fn, const std::vector<Tensor>& leaves,
                                    double eps = 1e-6, double atol = 1e-6, double rtol = 1e-4) {
  Tensor y = fn();
  Generator g(99);
  Tensor v = rand(y.shape(), DType::Float64, &g, -1.0, 1.0);
  auto loss_value = [&] {
    NoGradGuard ng;
    return sum(fn() * v).item<double>();
  };
  auto grads = autograd::grad({sum(y * v)}, leaves, {}, false, true);
  for (size_t j = 0; j < leaves.size(); ++j) {
    const Tensor& p = leaves[j];
    ASSERT_EQ(p.dtype(), DType::Float64);
    ASSERT_TRUE(p.is_contiguous());
    std::vector<double> ana = grads[j].defined() ? values(grads[j]) : std::vector<double>(size_t(p.numel()), 0.0);
    double* d = static_cast<double*>(p.data_ptr());
    for (int64_t i = 0; i < p.numel(); ++i) {
      double keep = d[i];
      d[i] = keep + eps;
      double up = loss_value();
      d[i] = keep - eps;
      double down = loss_value();
      d[i] = keep;
      double num = (up - down) / (2 * eps);
      ASSERT_NEAR(ana[size_t(i)], num, atol + rtol * std::abs(num)) << "leaf " << j << " element " << i;
    }
  }
}

}  // namespace skiff::nn::testing
