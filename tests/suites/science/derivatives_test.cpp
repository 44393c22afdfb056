#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "suites/science/derivatives.h"

using namespace skiff;
using namespace skiff::science;

namespace {

NetConfig small_net(Activation a, int64_t inputs = 2, int64_t outputs = 2) {
  NetConfig c;
  c.inputs = inputs;
  c.outputs = outputs;
  c.hidden = {12, 9, 7};
  c.activation = a;
  c.dtype = DType::Float64;
  c.seed = 3;
  c.lo.assign(inputs, -0.5);
  c.hi.assign(inputs, 1.5);
  return c;
}

double max_diff(const Tensor& a, const Tensor& b) { return amax(abs(a - b)).item<double>(); }

}  // namespace

// Taylor mode and nested reverse mode are two algorithms for the same numbers.
TEST(Derivatives, JetMatchesNestedAutogradForEveryPartial) {
  for (Activation act : {Activation::Tanh, Activation::Sin}) {
    PinnNet net(small_net(act));
    Generator gen(9);
    Tensor x = rand({33, 2}, DType::Float64, &gen, -0.5, 1.5);
    std::vector<Partial> needs;
    for (int out = 0; out < 2; ++out)
      for (MultiIndex a : {MultiIndex{1, 0}, {0, 1}, {2, 0}, {0, 2}, {1, 1}, {3, 0}, {0, 3}, {4, 0}, {0, 4}, {2, 2}})
        needs.push_back({out, a});
    auto jet = make_derivatives(DerivativeMode::Jet, net, x, needs);
    auto ag = make_derivatives(DerivativeMode::Autograd, net, x, needs);
    EXPECT_LT(max_diff(jet->values(), ag->values()), 1e-14);
    for (const Partial& p : needs) {
      Tensor a = jet->partial(p), b = ag->partial(p);
      double scale = std::max(1.0, amax(abs(b)).item<double>());
      EXPECT_LT(max_diff(a, b) / scale, 1e-11) << activation_name(act) << " " << partial_name(p, {"u", "v"}, {"x", "y"});
    }
  }
}

// The parameter gradient of a loss built on jets equals the one built on nested autograd.
TEST(Derivatives, JetLossGradientMatchesAutograd) {
  PinnNet net(small_net(Activation::Tanh, 2, 1));
  Generator gen(4);
  Tensor x = rand({20, 2}, DType::Float64, &gen, -0.5, 1.5);
  std::vector<Partial> needs{{0, {4, 0}}, {0, {2, 2}}, {0, {0, 4}}};
  auto biharmonic_loss = [&](DerivativeMode m) {
    auto d = make_derivatives(m, net, x, needs);
    Tensor b = d->partial(needs[0]) + d->partial(needs[1]) * 2.0 + d->partial(needs[2]);
    return mean(b * b);
  };
  auto params = net.parameters();
  // The output bias does not reach a 4th derivative: unused in both.
  auto gj = autograd::grad({biharmonic_loss(DerivativeMode::Jet)}, params, {}, false, true);
  auto ga = autograd::grad({biharmonic_loss(DerivativeMode::Autograd)}, params, {}, false, true);
  for (size_t i = 0; i < params.size(); ++i) {
    ASSERT_EQ(gj[i].defined(), ga[i].defined()) << "parameter " << i;
    if (!ga[i].defined()) continue;
    double scale = std::max(1.0, amax(abs(ga[i])).item<double>());
    EXPECT_LT(max_diff(gj[i], ga[i]) / scale, 1e-10) << "parameter " << i;
  }
}

// Against a known function: a net with no hidden layer is affine in the
// normalized input, so its derivatives are exact constants.
TEST(Derivatives, AffineNetworkHasConstantGradient) {
  NetConfig c = small_net(Activation::Tanh, 2, 1);
  c.hidden = {};
  PinnNet net(c);
  Tensor x = from_vector(std::vector<double>{0.1, 0.2, 1.0, -0.3}, Shape{2, 2});
  auto d = make_derivatives(DerivativeMode::Jet, net, x, {{0, {1, 0}}, {0, {2, 0}}});
  auto params = net.named_parameters();
  Tensor w = params[0].second;  // [1, 2] on inputs scaled by 2 / (1.5 - (-0.5)) = 1
  auto ux = d->partial({0, {1, 0}}).to_vector<double>();
  EXPECT_NEAR(ux[0], w.to_vector<double>()[0], 1e-15);
  EXPECT_NEAR(ux[1], w.to_vector<double>()[0], 1e-15);
  for (double v : d->partial({0, {2, 0}}).to_vector<double>()) EXPECT_EQ(v, 0.0);
}

TEST(Derivatives, JetRejectsWhatItCannotForm) {
  PinnNet net(small_net(Activation::Tanh));
  Tensor x = zeros({4, 2}, DType::Float64);
  EXPECT_THROW(make_derivatives(DerivativeMode::Jet, net, x, {{0, {3, 1}}}), ValueError);
  EXPECT_THROW(make_derivatives(DerivativeMode::Jet, net, x, {{0, {5, 0}}}), ValueError);
  EXPECT_THROW(make_derivatives(DerivativeMode::Jet, net, x, {{2, {1, 0}}}), ValueError);
  auto d = make_derivatives(DerivativeMode::Jet, net, x, {{0, {1, 0}}});
  EXPECT_THROW(d->partial({0, {0, 1}}), ValueError);  // not declared
  // The autograd mode forms any partial on demand.
  auto a = make_derivatives(DerivativeMode::Autograd, net, x, {});
  EXPECT_EQ(a->partial({0, {3, 1}}).shape(), (Shape{4}));
  EXPECT_THROW(parse_derivative_mode("forward"), ValueError);
}
