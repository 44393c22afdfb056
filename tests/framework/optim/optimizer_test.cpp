#include "framework/optim/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "framework/autograd/engine.h"
#include "framework/core/threading.h"
#include "framework/ops/op.h"
#include "framework/ops/ops.h"
#include "framework/ops/optim/optim_ops.h"
#include "framework/optim/optimizers.h"
#include "tests/framework/optim/optim_test_utils.h"

namespace skiff::optim {
namespace {

using testing::expect_close;
using testing::param_from;
using testing::Quadratic;
using testing::set_grad_from;
using testing::test_quadratic;
using testing::test_start;

constexpr int kSteps = 6;

/// Runs `opt` for kSteps on the test quadratic and returns the trajectory.
template <typename Opt, typename O>
std::vector<std::vector<double>> run_optimizer(O options) {
  const Quadratic q = test_quadratic();
  Tensor p = param_from(test_start());
  Opt opt(std::vector<Tensor>{p}, options);
  std::vector<std::vector<double>> traj;
  for (int s = 0; s < kSteps; ++s) {
    set_grad_from(p, q);
    opt.step();
    traj.push_back(p.to_vector<double>());
  }
  return traj;
}

// ---- reference implementations of the documented formulas (plain loops) -------------

std::vector<std::vector<double>> sgd_reference(const SGDOptions& o) {
  const Quadratic q = test_quadratic();
  std::vector<double> x = test_start(), buf(x.size());
  std::vector<std::vector<double>> traj;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<double> g = q.grad(x);
    for (size_t i = 0; i < x.size(); ++i) {
      double d = o.maximize ? -g[i] : g[i];
      d += o.weight_decay * x[i];
      if (o.momentum != 0) {
        buf[i] = s == 0 ? d : o.momentum * buf[i] + (1 - o.dampening) * d;
        d = o.nesterov ? d + o.momentum * buf[i] : buf[i];
      }
      x[i] -= o.lr * d;
    }
    traj.push_back(x);
  }
  return traj;
}

std::vector<std::vector<double>> adam_reference(const AdamOptions& o, bool decoupled) {
  const Quadratic q = test_quadratic();
  std::vector<double> x = test_start(), m(x.size()), v(x.size()), vmax(x.size());
  std::vector<std::vector<double>> traj;
  for (int t = 1; t <= kSteps; ++t) {
    std::vector<double> g = q.grad(x);
    for (size_t i = 0; i < x.size(); ++i) {
      double gi = o.maximize ? -g[i] : g[i];
      if (decoupled)
        x[i] *= 1 - o.lr * o.weight_decay;
      else
        gi += o.weight_decay * x[i];
      m[i] = o.beta1 * m[i] + (1 - o.beta1) * gi;
      v[i] = o.beta2 * v[i] + (1 - o.beta2) * gi * gi;
      double vv = v[i];
      if (o.amsgrad) vv = vmax[i] = std::max(vmax[i], v[i]);
      const double mhat_scale = o.lr / (1 - std::pow(o.beta1, t));
      const double denom = std::sqrt(vv) / std::sqrt(1 - std::pow(o.beta2, t)) + o.eps;
      x[i] -= mhat_scale * m[i] / denom;
    }
    traj.push_back(x);
  }
  return traj;
}

std::vector<std::vector<double>> rmsprop_reference(const RMSpropOptions& o) {
  const Quadratic q = test_quadratic();
  std::vector<double> x = test_start(), v(x.size()), ga(x.size()), buf(x.size());
  std::vector<std::vector<double>> traj;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<double> g = q.grad(x);
    for (size_t i = 0; i < x.size(); ++i) {
      double gi = g[i] + o.weight_decay * x[i];
      v[i] = o.alpha * v[i] + (1 - o.alpha) * gi * gi;
      double avg;
      if (o.centered) {
        ga[i] = o.alpha * ga[i] + (1 - o.alpha) * gi;
        avg = std::sqrt(v[i] - ga[i] * ga[i]) + o.eps;
      } else {
        avg = std::sqrt(v[i]) + o.eps;
      }
      if (o.momentum > 0) {
        buf[i] = o.momentum * buf[i] + gi / avg;
        x[i] -= o.lr * buf[i];
      } else {
        x[i] -= o.lr * gi / avg;
      }
    }
    traj.push_back(x);
  }
  return traj;
}

std::vector<std::vector<double>> adagrad_reference(const AdagradOptions& o) {
  const Quadratic q = test_quadratic();
  std::vector<double> x = test_start(), sum(x.size(), o.initial_accumulator_value);
  std::vector<std::vector<double>> traj;
  for (int t = 1; t <= kSteps; ++t) {
    std::vector<double> g = q.grad(x);
    const double clr = o.lr / (1 + (t - 1) * o.lr_decay);
    for (size_t i = 0; i < x.size(); ++i) {
      const double gi = g[i] + o.weight_decay * x[i];
      sum[i] += gi * gi;
      x[i] -= clr * gi / (std::sqrt(sum[i]) + o.eps);
    }
    traj.push_back(x);
  }
  return traj;
}

void expect_same_trajectory(const std::vector<std::vector<double>>& got,
                            const std::vector<std::vector<double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < got.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    expect_close(got[s], want[s]);
  }
}

// ---- update formulas ---------------------------------------------------------------------

TEST(SGDTest, MatchesReferenceFormula) {
  std::vector<SGDOptions> cases = {
      {.lr = 0.1},
      {.lr = 0.1, .momentum = 0.9},
      {.lr = 0.05, .momentum = 0.8, .dampening = 0.3, .weight_decay = 0.01},
      {.lr = 0.05, .momentum = 0.9, .nesterov = true},
      {.lr = 0.02, .momentum = 0.5, .weight_decay = 0.1, .nesterov = true, .maximize = true},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    expect_same_trajectory(run_optimizer<SGD>(cases[c]), sgd_reference(cases[c]));
  }
}

TEST(AdamTest, MatchesReferenceFormula) {
  std::vector<AdamOptions> cases = {
      {.lr = 0.1},
      {.lr = 0.05, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-6, .weight_decay = 0.1},
      {.lr = 0.1, .amsgrad = true},
      {.lr = 0.1, .weight_decay = 0.05, .amsgrad = true, .maximize = true},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    expect_same_trajectory(run_optimizer<Adam>(cases[c]), adam_reference(cases[c], false));
  }
}

TEST(AdamWTest, DecaysWeightsDecoupledFromGradient) {
  std::vector<AdamOptions> cases = {AdamW::default_options(), {.lr = 0.1, .weight_decay = 0.2},
                                    {.lr = 0.1, .weight_decay = 0.2, .amsgrad = true}};
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    expect_same_trajectory(run_optimizer<AdamW>(cases[c]), adam_reference(cases[c], true));
  }
  // With zero gradients, AdamW shrinks the weights by exactly (1 - lr*wd) per step; Adam's
  // L2 term instead goes through the normalisation.
  Tensor p = param_from({2.0, -4.0});
  AdamW opt({p}, {.lr = 0.1, .weight_decay = 0.5});
  p.set_grad(zeros({2}, DType::Float64));
  opt.step();
  expect_close(p.to_vector<double>(), {2.0 * 0.95, -4.0 * 0.95});
}

// The update is the registered adam_step op (a kernel per backend); it checks its tensors.
TEST(AdamStepOp, IsAnOpThatChecksItsTensors) {
  EXPECT_NO_THROW(op_def("adam_step"));
  Tensor p = zeros({3}), g = zeros({3}), m = zeros({3}), v = zeros({2});
  try {
    adam_step_(p, g, m, v, Tensor(), {});
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("adam_step: exp_avg_sq has shape [2], the parameter [3]"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(adam_step_(p, g, m, zeros({3}, DType::Float64), Tensor(), {}), TypeError);
  EXPECT_THROW(adam_step_(p, g, m, zeros({3}), Tensor(), {.amsgrad = true}), ValueError);  // no max_exp_avg_sq
}

TEST(RMSpropTest, MatchesReferenceFormula) {
  std::vector<RMSpropOptions> cases = {
      {.lr = 0.01},
      {.lr = 0.01, .alpha = 0.9, .weight_decay = 0.1},
      {.lr = 0.01, .centered = true},
      {.lr = 0.01, .momentum = 0.9},
      {.lr = 0.005, .alpha = 0.95, .eps = 1e-6, .weight_decay = 0.01, .momentum = 0.5, .centered = true},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    expect_same_trajectory(run_optimizer<RMSprop>(cases[c]), rmsprop_reference(cases[c]));
  }
}

TEST(AdagradTest, MatchesReferenceFormula) {
  std::vector<AdagradOptions> cases = {
      {.lr = 0.1},
      {.lr = 0.1, .lr_decay = 0.05, .weight_decay = 0.1, .initial_accumulator_value = 0.3},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    expect_same_trajectory(run_optimizer<Adagrad>(cases[c]), adagrad_reference(cases[c]));
  }
}

// ---- convergence through autograd -------------------------------------------------------

/// Minimises sum(a * (x - c)^2) with gradients from autograd; returns max |x - c|.
template <typename Opt, typename O>
double quadratic_error(O options, int steps) {
  Tensor a = from_vector<double>({1.0, 3.0, 0.5, 2.0});
  Tensor c = from_vector<double>({1.0, -2.0, 0.5, 3.0});
  Tensor x = param_from(test_start());
  Opt opt(std::vector<Tensor>{x}, options);
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    Tensor d = sub(x, c);
    backward(sum(mul(a, mul(d, d))));
    opt.step();
  }
  double err = 0;
  auto xv = x.to_vector<double>(), cv = c.to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) err = std::max(err, std::abs(xv[i] - cv[i]));
  return err;
}

TEST(OptimizerTest, ConvergesOnQuadratic) {
  EXPECT_LT(quadratic_error<SGD>(SGDOptions{.lr = 0.05, .momentum = 0.9}, 600), 1e-6);
  EXPECT_LT(quadratic_error<SGD>(SGDOptions{.lr = 0.05, .momentum = 0.9, .nesterov = true}, 600), 1e-6);
  EXPECT_LT(quadratic_error<Adam>(AdamOptions{.lr = 0.05}, 1000), 1e-3);
  EXPECT_LT(quadratic_error<AdamW>(AdamOptions{.lr = 0.05, .weight_decay = 0}, 1000), 1e-3);
  EXPECT_LT(quadratic_error<RMSprop>(RMSpropOptions{.lr = 0.01, .centered = true}, 1000), 1e-2);
  EXPECT_LT(quadratic_error<Adagrad>(AdagradOptions{.lr = 0.5}, 1000), 1e-3);
}

// ---- groups, grads, state ----------------------------------------------------------------

TEST(OptimizerTest, ParamGroupsUseTheirOwnHyperparameters) {
  Tensor a = param_from({1.0}), b = param_from({1.0});
  SGD opt({ParamGroup({a}), ParamGroup({b}, {{"lr", 0.5}, {"weight_decay", 1.0}})}, {.lr = 0.1});
  EXPECT_EQ(opt.param_groups()[0].get("lr"), 0.1);
  EXPECT_EQ(opt.param_groups()[1].get("momentum"), 0.0);  // filled from defaults
  a.set_grad(ones({1}, DType::Float64));
  b.set_grad(ones({1}, DType::Float64));
  opt.step();
  EXPECT_DOUBLE_EQ(a.item<double>(), 1.0 - 0.1);
  EXPECT_DOUBLE_EQ(b.item<double>(), 1.0 - 0.5 * (1.0 + 1.0));
  opt.set_lr(0.01);
  EXPECT_EQ(opt.param_groups()[1].get("lr"), 0.01);
}

TEST(OptimizerTest, SkipsParametersWithoutGradAndZeroGradClears) {
  Tensor a = param_from({1.0, 2.0}), b = param_from({3.0});
  SGD opt({a, b}, {.lr = 1.0});
  a.set_grad(from_vector<double>({1.0, 1.0}));
  opt.step();
  expect_close(a.to_vector<double>(), {0.0, 1.0});
  EXPECT_EQ(b.item<double>(), 3.0);
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(a.grad().defined());
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{0.0, 0.0}));
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
}

TEST(OptimizerTest, UpdatesFloat32AndHalfParametersInPlace) {
  Tensor f = from_vector<float>({1.0f, 2.0f}).set_requires_grad();
  Tensor h = detail::cast(from_vector<float>({1.0f, 2.0f}), DType::Float16).set_requires_grad();
  const void* fptr = f.data_ptr();
  Adam opt({f, h}, {.lr = 0.1});
  f.set_grad(from_vector<float>({1.0f, -1.0f}));
  h.set_grad(detail::cast(from_vector<float>({1.0f, -1.0f}), DType::Float16));
  opt.step();
  EXPECT_EQ(f.data_ptr(), fptr);
  // First Adam step moves each weight by lr * sign(g) (up to eps).
  auto fv = f.to_vector<float>();
  EXPECT_NEAR(fv[0], 0.9f, 1e-6);
  EXPECT_NEAR(fv[1], 2.1f, 1e-6);
  auto hv = detail::cast(h, DType::Float32).to_vector<float>();
  EXPECT_NEAR(hv[0], 0.9f, 1e-3);
  EXPECT_NEAR(hv[1], 2.1f, 2e-3);
  EXPECT_EQ(opt.state(1).buffers.at("exp_avg").dtype(), DType::Float32);
  EXPECT_EQ(h.dtype(), DType::Float16);
}

TEST(OptimizerTest, StateDictRoundTripResumesBitIdentically) {
  const Quadratic q = test_quadratic();
  Tensor p1 = param_from(test_start());
  Tensor w1 = param_from({0.5, -0.5});
  Adam a1({ParamGroup({p1}), ParamGroup({w1}, {{"lr", 0.01}})}, {.lr = 0.1, .amsgrad = true});
  for (int s = 0; s < 3; ++s) {
    set_grad_from(p1, q);
    w1.set_grad(from_vector<double>({1.0, 2.0}));
    a1.step();
  }
  OptimizerState sd = OptimizerState::from_tensor_map(a1.state_dict().to_tensor_map());
  EXPECT_TRUE(sd.tensors.count("state.0.exp_avg"));
  EXPECT_TRUE(sd.tensors.count("state.1.max_exp_avg_sq"));
  EXPECT_EQ(sd.scalars.at("state.0.step"), 3.0);
  EXPECT_EQ(sd.scalars.at("param_groups.1.lr"), 0.01);
  EXPECT_EQ(sd.scalars.at("num_groups"), 2.0);

  Tensor p2 = param_from(p1.to_vector<double>());
  Tensor w2 = param_from(w1.to_vector<double>());
  Adam a2({ParamGroup({p2}), ParamGroup({w2})}, {.lr = 0.5});
  a2.load_state_dict(sd);
  EXPECT_EQ(a2.param_groups()[1].get("lr"), 0.01);
  EXPECT_EQ(a2.param_groups()[0].get("amsgrad"), 1.0);
  for (int s = 0; s < 3; ++s) {
    set_grad_from(p1, q);
    set_grad_from(p2, q);
    a1.step();
    a2.step();
  }
  EXPECT_EQ(p1.to_vector<double>(), p2.to_vector<double>());
}

TEST(OptimizerTest, RejectsBadConfigurationsWithClearErrors) {
  Tensor p = param_from({1.0});
  EXPECT_THROW(SGD({p, p}), ValueError);
  EXPECT_THROW(SGD({from_vector<int64_t>({1})}), TypeError);
  EXPECT_THROW(SGD({Tensor()}), ValueError);
  EXPECT_THROW(SGD(std::vector<ParamGroup>{}, SGDOptions{}), ValueError);
  EXPECT_THROW(SGD({ParamGroup({p}, {{"learning_rate", 0.1}})}, SGDOptions{}), ValueError);
  EXPECT_THROW(SGD({p}, {.lr = -1}), ValueError);
  EXPECT_THROW(SGD({p}, {.nesterov = true}), ValueError);
  EXPECT_THROW(Adam({p}, {.beta1 = 1.0}), ValueError);
  try {
    SGD({ParamGroup({p}, {{"learning_rate", 0.1}})}, SGDOptions{});
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("learning_rate"), std::string::npos);
  }
  // Loading into a different parameter structure.
  Adam a({p}, {});
  p.set_grad(ones({1}, DType::Float64));
  a.step();
  Tensor q1 = param_from({1.0}), q2 = param_from({1.0});
  Adam b({ParamGroup({q1}), ParamGroup({q2})}, {});
  EXPECT_THROW(b.load_state_dict(a.state_dict()), ValueError);
  Tensor big = param_from({1.0, 2.0});
  Adam c({big}, {});
  EXPECT_THROW(c.load_state_dict(a.state_dict()), ShapeError);
}

TEST(OptimizerTest, ResultsAreBitIdenticalForAnyThreadCount) {
  // Large enough to cross the parallel grain.
  const int64_t n = 3 * kParallelGrain + 17;
  Tensor init = randn({n}, DType::Float32);
  Tensor grad = randn({n}, DType::Float32);
  auto run = [&](int threads) {
    const int prev = num_threads();
    set_num_threads(threads);
    Tensor p = detail::contiguous_copy(init).set_requires_grad();
    Adam opt({p}, {.lr = 0.01, .weight_decay = 0.1});
    for (int s = 0; s < 3; ++s) {
      p.set_grad(detail::contiguous_copy(grad));
      opt.step();
    }
    set_num_threads(prev);
    return p;
  };
  Tensor a = run(1), b = run(4);
  EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0);
}

}  // namespace
}  // namespace skiff::optim
