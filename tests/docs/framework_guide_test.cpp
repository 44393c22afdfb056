// The code shown in docs/framework.md, compiled and checked so the guide stays true.
#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"

namespace skiff {

TEST(FrameworkGuideTest, TensorsAndViews) {
  // --- guide: tensors ---
  Tensor x = reshape(arange(0.0, 6.0, 1.0, DType::Float32), {2, 3});
  Tensor xt = transpose(x, 0, 1);           // a view: shares x's storage
  Tensor y = add(xt, from_vector<float>({10, 20}));  // [3, 2] + [2] broadcasts
  // y = [[10, 23], [11, 24], [12, 25]]
  // --- end ---
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{10, 23, 11, 24, 12, 25}));
  EXPECT_EQ(xt.storage(), x.storage());
}

TEST(FrameworkGuideTest, TrainingStepByHand) {
  // --- guide: autograd ---
  manual_seed(0);
  Tensor w = randn({4, 3}).set_requires_grad();       // [out, in]
  Tensor b = zeros({4}).set_requires_grad();
  Tensor input = randn({8, 3});
  Tensor target = randint(0, 4, {8});
  Tensor loss = cross_entropy(linear(input, w, b), target);
  backward(loss);                                     // fills w.grad(), b.grad()
  {
    NoGradGuard no_grad;                              // the update is not recorded
    Tensor w_step = detach(w), b_step = detach(b);
    sub_(w_step, mul(w.grad(), 0.1));
    sub_(b_step, mul(b.grad(), 0.1));
  }
  // --- end ---
  EXPECT_EQ(w.grad().shape(), (Shape{4, 3}));
  Tensor loss2 = cross_entropy(linear(input, w, b), target);
  EXPECT_LT(loss2.item<float>(), loss.item<float>());
}

TEST(FrameworkGuideTest, HigherOrderDerivatives) {
  // --- guide: higher order ---
  Tensor t = linspace(0, 1, 5, DType::Float64).set_requires_grad();
  Tensor u = pow(t, 4.0);
  auto d = [&](const Tensor& f) { return autograd::grad({sum(f)}, {t}, {}, /*create_graph=*/true)[0]; };
  Tensor u4 = d(d(d(d(u))));                          // d^4/dt^4 t^4 = 24 everywhere
  // --- end ---
  for (double v : u4.to_vector<double>()) EXPECT_NEAR(v, 24.0, 1e-9);
}

}  // namespace skiff
