#pragma once
// Shared helpers for the optim tests: a separable quadratic whose gradient is
// computed in plain C++, so reference loops and optimizers see identical inputs.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::optim::testing {

/// f(x) = 0.5 * sum a_i (x_i - c_i)^2, gradient a_i (x_i - c_i).
struct Quadratic {
  std::vector<double> a, c;
  std::vector<double> grad(const std::vector<double>& x) const {
    std::vector<double> g(x.size());
    for (size_t i = 0; i < x.size(); ++i) g[i] = a[i] * (x[i] - c[i]);
    return g;
  }
  double value(const std::vector<double>& x) const {
    double f = 0;
    for (size_t i = 0; i < x.size(); ++i) f += 0.5 * a[i] * (x[i] - c[i]) * (x[i] - c[i]);
    return f;
  }
};

inline Quadratic test_quadratic() { return {{1.0, 3.0, 0.5, 2.0}, {1.0, -2.0, 0.5, 3.0}}; }
inline std::vector<double> test_start() { return {0.3, 0.7, -1.2, 2.5}; }

inline Tensor param_from(const std::vector<double>& v) { return from_vector<double>(v).set_requires_grad(); }
inline void set_grad_from(Tensor& p, const Quadratic& q) {
  p.set_grad(from_vector<double>(q.grad(p.to_vector<double>())));
}

inline void expect_close(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-12) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol * (1 + std::abs(b[i]))) << "element " << i;
}

}  // namespace skiff::optim::testing
