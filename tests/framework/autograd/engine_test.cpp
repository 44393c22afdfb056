#include "framework/autograd/engine.h"

#include <gtest/gtest.h>

#include "framework/autograd/gradcheck.h"
#include "framework/ops/ops.h"

namespace skiff {

TEST(EngineTest, BackwardAccumulatesIntoLeaves) {
  Tensor x = from_vector<double>({1, 2, 3}).set_requires_grad();
  Tensor y = sum(mul(x, x));
  backward(y);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 4, 6}));
  backward(sum(x));  // a second graph accumulates
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{3, 5, 7}));
}

TEST(EngineTest, BroadcastGradientsAreReduced) {
  Tensor a = ones({3, 1}, DType::Float64).set_requires_grad();
  Tensor b = ones({4}, DType::Float64).set_requires_grad();
  backward(sum(mul(a, b)));
  EXPECT_EQ(a.grad().shape(), (Shape{3, 1}));
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{4, 4, 4}));
  EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{3, 3, 3, 3}));
}

TEST(EngineTest, NoGradGuardStopsRecording) {
  Tensor x = ones({2}).set_requires_grad();
  {
    NoGradGuard g;
    EXPECT_FALSE(mul(x, x).requires_grad());
  }
  EXPECT_TRUE(mul(x, x).requires_grad());
  EXPECT_FALSE(detach(x).requires_grad());
}

TEST(EngineTest, SecondBackwardWithoutRetainIsAnError) {
  Tensor x = ones({2}, DType::Float64).set_requires_grad();
  Tensor y = sum(exp(x));
  backward(y);
  EXPECT_THROW(backward(y), ValueError);
  Tensor z = sum(exp(x));
  backward(z, {}, /*retain_graph=*/true);
  EXPECT_NO_THROW(backward(z));
}

TEST(EngineTest, GradDoesNotTouchDotGrad) {
  Tensor x = from_vector<double>({0.5}).set_requires_grad();
  auto g = autograd::grad({sin(x)}, {x});
  EXPECT_NEAR(g[0].item<double>(), std::cos(0.5), 1e-15);
  EXPECT_FALSE(x.grad().defined());
  Tensor unused = ones({1}, DType::Float64).set_requires_grad();
  EXPECT_THROW(autograd::grad({sum(exp(x))}, {unused}), ValueError);
  auto g2 = autograd::grad({sum(exp(x))}, {unused}, {}, false, /*allow_unused=*/true);
  EXPECT_FALSE(g2[0].defined());
}

TEST(EngineTest, HooksAndRetainGrad) {
  Tensor x = from_vector<double>({1, 2}).set_requires_grad();
  Tensor h = mul(x, 3.0);
  h.retain_grad();
  h.register_hook([](const Tensor& g) { return mul(g, 2.0); });
  x.register_hook([](const Tensor& g) { return add(g, 1.0); });
  backward(sum(h));
  EXPECT_EQ(h.grad().to_vector<double>(), (std::vector<double>{2, 2}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{7, 7}));
}

// A leaf used twice gets one post-accumulate call per pass, after both contributions are in
// .grad (what data parallelism needs to start reducing that gradient).
TEST(EngineTest, PostAccumulateHookRunsOncePerPassWithTheFinalGradient) {
  Tensor x = from_vector<double>({1, 2}).set_requires_grad();
  std::vector<std::vector<double>> seen;
  x.register_post_accumulate_grad_hook([&](const Tensor& leaf) { seen.push_back(leaf.grad().to_vector<double>()); });
  backward(sum(add(mul(x, 3.0), mul(x, x))));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (std::vector<double>{5, 7}));
  backward(sum(mul(x, 2.0)));  // accumulates: the hook sees the sum
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], (std::vector<double>{7, 9}));
  EXPECT_THROW(mul(x, 2.0).register_post_accumulate_grad_hook([](const Tensor&) {}), ValueError);
  // grad() leaves .grad alone and runs no hook
  autograd::grad({sum(x)}, {x});
  EXPECT_EQ(seen.size(), 2u);
}

TEST(EngineTest, InPlaceChangeOfSavedTensorIsDetected) {
  Tensor x = from_vector<double>({1, 2}).set_requires_grad();
  Tensor c = from_vector<double>({3, 4});
  Tensor y = sum(mul(x, c));
  mul_(c, 2.0);
  EXPECT_THROW(backward(y), ValueError);
}

TEST(EngineTest, NonScalarRootNeedsGradient) {
  Tensor x = ones({2}).set_requires_grad();
  EXPECT_THROW(backward(mul(x, 2.0)), ValueError);
  EXPECT_THROW(arange(3).set_requires_grad(), TypeError);
}

TEST(EngineTest, GraphIsFreedAfterBackward) {
  Tensor x = ones({4}, DType::Float64).set_requires_grad();
  std::weak_ptr<autograd::Node> weak;
  {
    Tensor y = sum(exp(x));
    weak = y.grad_fn();
    backward(y);
  }
  EXPECT_TRUE(weak.expired());
}

}  // namespace skiff
