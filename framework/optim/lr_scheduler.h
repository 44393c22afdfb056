#pragma once
/// \file lr_scheduler.h
/// Learning-rate schedules (torch.optim.lr_scheduler closed forms).
///
/// A scheduler holds an epoch counter (last_epoch; 0 after construction) and writes
/// lr_at(last_epoch, g) into option "lr" of every group g of its optimizer on
/// construction and on each step(). Schedules are pure functions of the epoch and
/// the base learning rates, so load_state_dict() restores them exactly. The base lr
/// of a group is its "initial_lr" option, set from "lr" by the first scheduler
/// attached (as PyTorch does), so a second scheduler or a resumed run sees the same base.
///
/// Call step() once per epoch or per iteration, after optimizer.step().

#include <memory>
#include <string>
#include <vector>

#include "framework/optim/optimizer.h"

namespace skiff::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& opt);
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// Advances one epoch and sets the groups' lr.
  void step();
  /// Jumps to `epoch` and sets the groups' lr.
  void step_to(int64_t epoch);
  /// Learning rates for the current epoch (one per group).
  std::vector<double> get_lr() const;
  /// The learning rates last written to the optimizer.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }

  /// Learning rate of group g at `epoch` (>= 0). \throws ValueError for epochs a schedule does not cover.
  virtual double lr_at(int64_t epoch, size_t g) const = 0;

  /// Scalars "last_epoch" and "base_lrs.<g>".
  OptimizerState state_dict() const;
  /// Restores the counter and base lrs and re-applies the lr. \throws ValueError on a group-count mismatch.
  void load_state_dict(const OptimizerState& sd);

  Optimizer& optimizer() const { return opt_; }

 protected:
  /// Sets epoch 0 and applies it; the last statement of every concrete constructor
  /// (lr_at is virtual, so the base constructor cannot do it).
  void initialize();
  void apply();

  Optimizer& opt_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  int64_t last_epoch_ = -1;
};

/// lr = base * factor for epoch < total_iters, then base. With the defaults the lr is constant.
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(Optimizer& opt, double factor = 1.0, int64_t total_iters = 0);
  double lr_at(int64_t epoch, size_t g) const override;

 private:
  double factor_;
  int64_t total_iters_;
};

/// lr = base * gamma^floor(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  /// \throws ValueError for step_size < 1.
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t epoch, size_t g) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// lr = base * gamma^(number of milestones <= epoch). \throws ValueError for unsorted milestones.
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1);
  double lr_at(int64_t epoch, size_t g) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

/// lr = base * gamma^epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& opt, double gamma);
  double lr_at(int64_t epoch, size_t g) const override;

 private:
  double gamma_;
};

/// lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2 (periodic past T_max,
/// as PyTorch's closed form). \throws ValueError for T_max < 1.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0.0);
  double lr_at(int64_t epoch, size_t g) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

/// lr = (base - end_lr) * (1 - min(epoch, total_iters) / total_iters)^power + end_lr
/// (PyTorch's PolynomialLR when end_lr = 0; Paddle's PolynomialDecay otherwise).
class PolynomialLR : public LRScheduler {
 public:
  PolynomialLR(Optimizer& opt, int64_t total_iters, double power = 1.0, double end_lr = 0.0);
  double lr_at(int64_t epoch, size_t g) const override;

 private:
  int64_t total_iters_;
  double power_, end_lr_;
};

/// One-cycle policy (torch OneCycleLR, lr only). Starts at max_lr / div_factor, rises to max_lr
/// over pct_start * total_steps steps, then anneals to initial / final_div_factor at step
/// total_steps - 1; three_phase first returns to the initial lr, then anneals to the minimum.
/// Ignores the groups' own lr. \throws ValueError for stepping past total_steps - 1.
struct OneCycleOptions {
  double pct_start = 0.3;
  bool cosine = true;  ///< else linear annealing
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  bool three_phase = false;
};
class OneCycleLR : public LRScheduler {
 public:
  /// max_lrs: one per group, or one for all groups.
  OneCycleLR(Optimizer& opt, std::vector<double> max_lrs, int64_t total_steps, OneCycleOptions o = {});
  double lr_at(int64_t epoch, size_t g) const override;

 private:
  struct Phase {
    double end_step;
    double start_factor, end_factor;  ///< 0: initial lr, 1: max lr, 2: min lr
  };
  std::vector<double> max_lrs_;
  int64_t total_steps_;
  OneCycleOptions o_;
  std::vector<Phase> phases_;
};

/// Linear warm-up in front of any schedule: for epoch < warmup_steps the lr rises linearly
/// from start_factor * target to target, where target = inner.lr_at(0, g); afterwards the
/// inner schedule runs from its epoch 0 (lr = inner.lr_at(epoch - warmup_steps, g)).
class LinearWarmup : public LRScheduler {
 public:
  /// \throws ValueError for warmup_steps < 0, start_factor outside [0, 1], or a null inner scheduler.
  LinearWarmup(std::unique_ptr<LRScheduler> inner, int64_t warmup_steps, double start_factor = 0.0);
  double lr_at(int64_t epoch, size_t g) const override;
  const LRScheduler& inner() const { return *inner_; }

 private:
  std::unique_ptr<LRScheduler> inner_;
  int64_t warmup_steps_;
  double start_factor_;
};

}  // namespace skiff::optim
