#pragma once
/// \file lbfgs.h
/// L-BFGS (torch.optim.LBFGS), optionally with a strong-Wolfe line search.
///
/// All parameters form one flat vector x. Directions, history and line-search
/// arithmetic run in double on that flat vector (serial dot products, so results do
/// not depend on the thread count); parameters are moved in their own dtype.

#include <tuple>
#include <utility>
#include <vector>

#include "framework/optim/optimizer.h"

namespace skiff::optim {

struct LBFGSOptions {
  double lr = 1.0;                 ///< step length of the first trial (and of every step without line search)
  int64_t max_iter = 20;           ///< iterations per step() call
  int64_t max_eval = 0;            ///< closure evaluations per step(); 0 means max_iter * 5 / 4
  double tolerance_grad = 1e-7;    ///< stop when max |g| <= tolerance_grad
  double tolerance_change = 1e-9;  ///< stop when the step or the loss change falls below this
  int64_t history_size = 100;      ///< number of (s, y) correction pairs kept
  bool strong_wolfe = false;       ///< line search: strong Wolfe (c1 = 1e-4, c2 = 0.9, 25 trials); else fixed lr
  Options to_map() const;
};

class LBFGS : public Optimizer {
 public:
  /// \throws ValueError for lr <= 0, max_iter < 1 or history_size < 1.
  LBFGS(std::vector<Tensor> params, LBFGSOptions o = {});

  /// Runs up to max_iter iterations; `closure` must zero the grads, recompute the loss,
  /// call backward and return the loss. \returns the loss of the first evaluation.
  /// \throws ValueError if no closure is given.
  double step(const Closure& closure) override;

  /// Total closure evaluations and iterations across all step() calls.
  int64_t func_evals() const { return func_evals_; }
  int64_t n_iter() const { return n_iter_; }

  /// Base keys plus "lbfgs.d", "lbfgs.prev_flat_grad", "lbfgs.old_dirs.<k>", "lbfgs.old_stps.<k>"
  /// (tensors, float64) and "lbfgs.t", "lbfgs.H_diag", "lbfgs.prev_loss", "lbfgs.n_iter",
  /// "lbfgs.func_evals", "lbfgs.history", "lbfgs.ro.<k>" (scalars).
  OptimizerState state_dict() const override;
  void load_state_dict(const OptimizerState& sd) override;

 protected:
  void update(const ParamGroup&, Tensor&, const Tensor&, ParamState&) override;
  void validate(const ParamGroup& group) const override;

 private:
  using Vec = std::vector<double>;
  Vec gather_flat_grad() const;
  void add_to_params(double t, const Vec& d);
  Vec params_flat() const;
  void set_params(const Vec& x);
  /// Evaluates the closure at x + t*d and restores x. Returns (loss, grad).
  std::pair<double, Vec> directional_evaluate(const Closure& closure, const Vec& x, double t, const Vec& d);
  /// Strong-Wolfe search along d from x; updates t, returns (loss, grad, evals).
  std::tuple<double, Vec, int64_t> strong_wolfe(const Closure& closure, const Vec& x, double& t, const Vec& d,
                                                 double f, const Vec& g, double gtd);

  int64_t numel_ = 0;
  // Persistent state across step() calls (as in PyTorch).
  Vec d_, prev_flat_grad_;
  double t_ = 0.0, h_diag_ = 1.0, prev_loss_ = 0.0;
  std::vector<Vec> old_dirs_, old_stps_;
  std::vector<double> ro_;
  int64_t n_iter_ = 0, func_evals_ = 0;
};

}  // namespace skiff::optim
