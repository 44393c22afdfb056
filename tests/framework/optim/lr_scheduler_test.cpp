#include "framework/optim/lr_scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>

#include "framework/optim/optimizers.h"

namespace skiff::optim {
namespace {

constexpr double kPi = std::numbers::pi;

struct Fixture {
  Tensor p = from_vector<double>({1.0}).set_requires_grad();
  Tensor q = from_vector<double>({1.0}).set_requires_grad();
  SGD opt{{ParamGroup({p}), ParamGroup({q}, {{"lr", 0.5}})}, SGDOptions{.lr = 0.1}};
};

/// Steps `s` n times and checks every group's lr (in the optimizer too) against `want(epoch, base)`.
void expect_sequence(LRScheduler& s, Optimizer& opt, int n, const std::function<double(int, double)>& want) {
  const std::vector<double> base = s.base_lrs();
  for (int e = 0; e < n; ++e) {
    if (e > 0) s.step();
    ASSERT_EQ(s.last_epoch(), e);
    for (size_t g = 0; g < base.size(); ++g) {
      EXPECT_NEAR(opt.param_groups()[g].get("lr"), want(e, base[g]), 1e-15) << "epoch " << e << " group " << g;
      EXPECT_EQ(s.get_last_lr()[g], opt.param_groups()[g].get("lr"));
    }
  }
}

TEST(LRSchedulerTest, ConstantStepMultiStepExponential) {
  {
    Fixture f;
    ConstantLR s(f.opt);
    expect_sequence(s, f.opt, 5, [](int, double b) { return b; });
  }
  {
    Fixture f;
    ConstantLR s(f.opt, 0.5, 3);
    expect_sequence(s, f.opt, 6, [](int e, double b) { return e < 3 ? b * 0.5 : b; });
  }
  {
    Fixture f;
    StepLR s(f.opt, 3, 0.5);
    expect_sequence(s, f.opt, 10, [](int e, double b) { return b * std::pow(0.5, e / 3); });
  }
  {
    Fixture f;
    MultiStepLR s(f.opt, {2, 5, 6}, 0.1);
    const double factors[] = {1, 1, 0.1, 0.1, 0.1, 0.01, 0.001, 0.001};
    expect_sequence(s, f.opt, 8, [&](int e, double b) { return b * factors[e]; });
  }
  {
    Fixture f;
    ExponentialLR s(f.opt, 0.9);
    expect_sequence(s, f.opt, 10, [](int e, double b) { return b * std::pow(0.9, e); });
  }
}

TEST(LRSchedulerTest, CosineAndPolynomial) {
  {
    Fixture f;
    CosineAnnealingLR s(f.opt, 10, 0.01);
    expect_sequence(s, f.opt, 15,
                    [](int e, double b) { return 0.01 + (b - 0.01) * (1 + std::cos(kPi * e / 10)) / 2; });
  }
  {
    Fixture f;
    PolynomialLR s(f.opt, 8, 2.0);
    expect_sequence(s, f.opt, 12, [](int e, double b) { return b * std::pow(1.0 - std::min(e, 8) / 8.0, 2.0); });
  }
  {
    Fixture f;
    PolynomialLR s(f.opt, 4, 1.0, 0.001);
    expect_sequence(s, f.opt, 6, [](int e, double b) { return (b - 0.001) * (1.0 - std::min(e, 4) / 4.0) + 0.001; });
  }
}

TEST(LRSchedulerTest, OneCycleFollowsTwoAndThreePhases) {
  Fixture f;
  const int T = 20;
  OneCycleLR s(f.opt, {1.0, 2.0}, T);
  // Phase ends at pct*T - 1 = 5 and T - 1 = 19.
  auto cos_anneal = [](double a, double b, double pct) { return b + (a - b) / 2 * (std::cos(kPi * pct) + 1); };
  const double maxes[] = {1.0, 2.0};
  for (int e = 0; e < T; ++e) {
    if (e > 0) s.step();
    for (int g = 0; g < 2; ++g) {
      const double init = maxes[g] / 25, mn = init / 1e4;
      const double want = e <= 5 ? cos_anneal(init, maxes[g], e / 5.0) : cos_anneal(maxes[g], mn, (e - 5) / 14.0);
      EXPECT_NEAR(f.opt.param_groups()[g].get("lr"), want, 1e-14) << e;
    }
  }
  EXPECT_NEAR(s.get_last_lr()[0], 1.0 / 25 / 1e4, 1e-15);
  EXPECT_THROW(s.step(), ValueError);

  Fixture f3;
  OneCycleLR s3(f3.opt, {1.0}, 10, {.pct_start = 0.25, .cosine = false, .three_phase = true});
  // Phases end at 1.5, 3.0 and 9 (linear).
  const double init = 0.04, mn = 0.04 / 1e4;
  std::vector<double> want = {init, init + (1 - init) / 1.5, 1.0 + (init - 1.0) * (0.5 / 1.5), init};
  for (int e = 4; e < 10; ++e) want.push_back(init + (mn - init) * (e - 3) / 6.0);
  for (int e = 0; e < 10; ++e) {
    if (e > 0) s3.step();
    EXPECT_NEAR(f3.opt.param_groups()[0].get("lr"), want[e], 1e-14) << e;
  }
}

TEST(LRSchedulerTest, LinearWarmupWrapsAnySchedule) {
  Fixture f;
  LinearWarmup s(std::make_unique<CosineAnnealingLR>(f.opt, 10), 4, 0.0);
  expect_sequence(s, f.opt, 14, [](int e, double b) {
    return e < 4 ? b * e / 4.0 : b * (1 + std::cos(kPi * (e - 4) / 10)) / 2;
  });
  Fixture g;
  LinearWarmup w(std::make_unique<StepLR>(g.opt, 2, 0.5), 2, 0.5);
  expect_sequence(w, g.opt, 7, [](int e, double b) {
    return e < 2 ? b * (0.5 + 0.5 * e / 2.0) : b * std::pow(0.5, (e - 2) / 2);
  });
  EXPECT_THROW(LinearWarmup(nullptr, 3), ValueError);
  EXPECT_THROW(LinearWarmup(std::make_unique<ConstantLR>(g.opt), -1), ValueError);
}

TEST(LRSchedulerTest, StateDictRestoresPosition) {
  Fixture a;
  StepLR s(a.opt, 2, 0.5);
  for (int i = 0; i < 5; ++i) s.step();
  OptimizerState sd = s.state_dict();
  EXPECT_EQ(sd.scalars.at("last_epoch"), 5.0);

  Fixture b;
  StepLR t(b.opt, 2, 0.5);
  t.load_state_dict(sd);
  EXPECT_EQ(t.last_epoch(), 5);
  EXPECT_EQ(b.opt.param_groups()[1].get("lr"), a.opt.param_groups()[1].get("lr"));
  s.step();
  t.step();
  EXPECT_EQ(t.get_last_lr(), s.get_last_lr());
  // A second scheduler sees the original base lr through "initial_lr".
  ExponentialLR e(b.opt, 0.5);
  EXPECT_EQ(e.base_lrs()[0], 0.1);
}

TEST(LRSchedulerTest, RejectsBadArguments) {
  Fixture f;
  EXPECT_THROW(StepLR(f.opt, 0), ValueError);
  EXPECT_THROW(MultiStepLR(f.opt, {5, 2}), ValueError);
  EXPECT_THROW(CosineAnnealingLR(f.opt, 0), ValueError);
  EXPECT_THROW(OneCycleLR(f.opt, {1.0, 2.0, 3.0}, 10), ValueError);
  EXPECT_THROW(PolynomialLR(f.opt, 0), ValueError);
}

}  // namespace
}  // namespace skiff::optim
