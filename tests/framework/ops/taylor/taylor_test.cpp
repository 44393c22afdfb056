#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/autograd/gradcheck.h"
#include "framework/core/rng.h"
#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "framework/ops/taylor/taylor.h"

using namespace skiff;

namespace {

struct Series {
  Tensor z0;
  std::vector<Tensor> z;
};

// M directions, N points, H units; `given` coefficients, z1 shared by all points when `shared`.
Series make_series(int given, bool shared, uint64_t seed, bool grad = false) {
  Generator gen(seed);
  const int64_t m = 3, n = 5, h = 4;
  Series s{randn({n, h}, DType::Float64, &gen), {}};
  for (int k = 0; k < given; ++k) s.z.push_back(randn({m, k == 0 && shared ? 1 : n, h}, DType::Float64, &gen));
  if (grad) {
    s.z0.set_requires_grad(true);
    for (auto& t : s.z) t.set_requires_grad(true);
  }
  return s;
}

double max_diff(const Tensor& a, const Tensor& b) { return amax(abs(a - b)).item<double>(); }

// A scalar from every output, weighted so each coefficient's gradient differs.
Tensor weighted_sum(const std::vector<Tensor>& y) {
  Tensor out;
  for (size_t k = 0; k < y.size(); ++k) {
    Tensor t = sum(mul(y[k], sin(y[k] * double(k + 1))));
    out = out.defined() ? out + t : t;
  }
  return out;
}

}  // namespace

// A known series: tanh(x0 + s) has derivatives tanh^(k)(x0) along s, and
// sin(x0 + 2 s) has 2^k sin^(k)(x0).
TEST(ActivationJet, MatchesClosedForms) {
  const double x0 = 0.3, t = std::tanh(x0), f1 = 1 - t * t;
  const double tanh_d[4] = {f1, -2 * t * f1, f1 * (6 * t * t - 2), f1 * t * (16 - 24 * t * t)};
  auto y = activation_jet(full({1, 1}, x0, DType::Float64), {full({1, 1, 1}, 1.0, DType::Float64)}, 4, "tanh");
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(y[k + 1].item<double>(), tanh_d[k], 1e-14) << k;
  auto s = activation_jet(full({1, 1}, x0, DType::Float64), {full({1, 1, 1}, 2.0, DType::Float64)}, 4, "sin");
  const double sin_d[4] = {2 * std::cos(x0), -4 * std::sin(x0), -8 * std::cos(x0), 16 * std::sin(x0)};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(s[k + 1].item<double>(), sin_d[k], 1e-13) << k;
  // The 4th derivative of tanh against finite differences of the 3rd (closed form above).
  auto third = [](double x) {
    double tt = std::tanh(x), ff = 1 - tt * tt;
    return ff * (6 * tt * tt - 2);
  };
  EXPECT_NEAR(tanh_d[3], (third(x0 + 1e-5) - third(x0 - 1e-5)) / 2e-5, 1e-8);
}

TEST(ActivationJet, KernelMatchesReference) {
  for (const char* act : {"tanh", "sin"})
    for (int order = 1; order <= 4; ++order)
      for (int given : {1, order})
        for (bool shared : {true, false}) {
          Series s = make_series(given, shared, 11 + order);
          auto a = activation_jet(s.z0, s.z, order, act);
          auto b = activation_jet_reference(s.z0, s.z, order, act);
          ASSERT_EQ(a.size(), size_t(order + 1));
          for (int k = 0; k <= order; ++k) {
            ASSERT_EQ(a[k].shape(), b[k].shape());
            EXPECT_LT(max_diff(a[k], b[k]), 1e-12) << act << " order " << order << " given " << given << " y" << k;
          }
        }
}

TEST(ActivationJet, FusedBackwardMatchesReferenceGradients) {
  for (const char* act : {"tanh", "sin"})
    for (int order = 1; order <= 4; ++order)
      for (int given : {1, order})
        for (bool shared : {true, false}) {
          Series s = make_series(given, shared, 5 + order, true);
          std::vector<Tensor> inputs{s.z0};
          inputs.insert(inputs.end(), s.z.begin(), s.z.end());
          auto ga = autograd::grad({weighted_sum(activation_jet(s.z0, s.z, order, act))}, inputs);
          auto gb = autograd::grad({weighted_sum(activation_jet_reference(s.z0, s.z, order, act))}, inputs);
          for (size_t i = 0; i < inputs.size(); ++i) {
            ASSERT_EQ(ga[i].shape(), inputs[i].shape());
            EXPECT_LT(max_diff(ga[i], gb[i]), 1e-11) << act << " order " << order << " given " << given << " input " << i;
          }
        }
}

TEST(ActivationJet, Gradcheck) {
  for (const char* act : {"tanh", "sin"})
    for (int order : {2, 4}) {
      Series s = make_series(order, true, 3, true);
      std::vector<Tensor> inputs{s.z0};
      inputs.insert(inputs.end(), s.z.begin(), s.z.end());
      auto fn = [&](const std::vector<Tensor>& in) {
        return weighted_sum(activation_jet(in[0], std::vector<Tensor>(in.begin() + 1, in.end()), order, act));
      };
      auto r = autograd::gradcheck(fn, inputs);
      EXPECT_TRUE(r.ok) << act << " " << order << ": " << r.message;
      auto r2 = autograd::gradgradcheck(fn, inputs);  // the create_graph backward
      EXPECT_TRUE(r2.ok) << act << " " << order << ": " << r2.message;
    }
}

TEST(ActivationJet, BadArgumentsAreErrors) {
  Series s = make_series(2, false, 1);
  EXPECT_THROW(activation_jet(s.z0, s.z, 2, "relu"), ValueError);
  EXPECT_THROW(activation_jet(s.z0, s.z, 1, "tanh"), ValueError);  // more coefficients than the order
  EXPECT_THROW(activation_jet(s.z0, s.z, 5, "tanh"), ValueError);
  EXPECT_THROW(activation_jet(s.z0, {}, 2, "tanh"), ValueError);
  EXPECT_THROW(activation_jet(s.z0, {zeros({3, 2, 4}, DType::Float64)}, 2, "tanh"), ShapeError);
  EXPECT_THROW(activation_jet(s.z0, {s.z[0], zeros({3, 1, 4}, DType::Float64)}, 2, "tanh"), ShapeError);
  EXPECT_THROW(activation_jet(to(s.z0, DType::Float32), {s.z[0]}, 2, "tanh"), TypeError);
}
