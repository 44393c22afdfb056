// L-BFGS with the strong-Wolfe line search trains a small MLP to fit sin on
// [-pi, pi] to a mean squared error of at most 1e-6 (issue 3, "Proof that it learns").
#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/core/threading.h"
#include "framework/nn/nn.h"
#include "framework/ops/ops.h"
#include "framework/optim/lbfgs.h"

namespace skiff::optim {
namespace {

// Sets the thread count for a scope and restores the previous one.
struct ThreadCountGuard {
  explicit ThreadCountGuard(int n) : saved(num_threads()) { set_num_threads(n); }
  ~ThreadCountGuard() { set_num_threads(saved); }
  int saved;
};

TEST(LBFGSFitTest, MlpFitsSineToOneMicroMse) {
  // One thread: the tensors are tiny, so a second thread only adds synchronisation, and
  // with ctest -j on a loaded machine spinning OpenMP teams slow this test down ~7x.
  ThreadCountGuard one_thread(1);
  Generator gen(11);
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(1, 24, true, &gen), std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Linear>(24, 24, true, &gen), std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Linear>(24, 1, true, &gen)});
  model->to(DType::Float64);
  const double pi = std::acos(-1.0);
  Tensor x = reshape(linspace(-pi, pi, 128, DType::Float64), {128, 1});
  Tensor y = sin(x);

  LBFGS opt(model->parameters(), {.lr = 1.0,
                                  .max_iter = 4000,
                                  .tolerance_grad = 1e-12,
                                  .tolerance_change = 1e-16,
                                  .history_size = 50,
                                  .strong_wolfe = true});
  auto closure = [&] {
    opt.zero_grad();
    Tensor loss = mse_loss((*model)(x), y);
    backward(loss);
    return loss.item<double>();
  };
  const double initial = opt.step(closure);
  double mse = 0;
  {
    NoGradGuard no_grad;
    mse = mse_loss((*model)(x), y).item<double>();
  }
  std::printf("L-BFGS sin fit: mse %.3g -> %.3g in %lld iterations, %lld evaluations\n", initial, mse,
              (long long)opt.n_iter(), (long long)opt.func_evals());
  EXPECT_LE(mse, 1e-6);
  EXPECT_GT(initial, 1e-2);

  // Also off the training grid (midpoints): the fit is a function fit, not interpolation of 128 points.
  NoGradGuard no_grad;
  Tensor xm = reshape(linspace(-pi + pi / 127, pi - pi / 127, 127, DType::Float64), {127, 1});
  EXPECT_LE(mse_loss((*model)(xm), sin(xm)).item<double>(), 1e-5);
}

}  // namespace
}  // namespace skiff::optim
