#include "suites/science/pinn_training.h"

#include <cmath>

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "framework/optim/lbfgs.h"
#include "framework/optim/lr_scheduler.h"
#include "framework/optim/optimizers.h"

namespace skiff::science {

namespace {

// The whole constraint set is one batch: every step sees every point.
class PinnTask final : public train::TrainTask {
 public:
  PinnTask(PinnSolver& solver, DerivativeMode mode) : solver_(solver), mode_(mode) {}
  nn::Module& model() override { return solver_.net(); }
  Tensor loss(const data::Example&) override { return solver_.loss(); }
  // The loss and its parts per constraint, and the validation error when the
  // problem has a reference.
  std::map<std::string, double> evaluate() override {
    // The Trainer evaluates without a graph; nested-autograd derivatives need one.
    GradModeGuard grad(mode_ == DerivativeMode::Autograd);
    std::map<std::string, double> parts;
    std::map<std::string, double> m;
    m["loss"] = to(detach(solver_.loss(&parts)), DType::Float64).item<double>();
    for (const auto& [name, v] : parts) m["loss_" + name] = v;
    if (double e = solver_.validation_error(); e >= 0) m["rel_l2"] = e;
    return m;
  }

 private:
  PinnSolver& solver_;
  DerivativeMode mode_;
};

}  // namespace

int64_t lbfgs_iterations_per_step(const TrainOptions& o) {
  return o.log_every > 0 ? std::min(o.log_every, o.lbfgs_iterations) : o.lbfgs_iterations;
}

train::FitResult fit_pinn(PinnSolver& solver, const TrainOptions& o, const PinnRunOptions& run,
                          const std::optional<std::filesystem::path>& resume_from) {
  SKIFF_CHECK(o.adam_iterations > 0 || o.lbfgs_iterations > 0,
              "PINN training: train.adam.iterations and train.lbfgs.iterations are both 0, so there is nothing to "
              "train");
  auto params = solver.net().parameters();
  std::vector<train::TrainPhase> phases;

  optim::AdamOptions ao;
  ao.lr = o.adam_lr;
  optim::Adam adam(params, ao);
  // lr * gamma^(step / decay_steps), as one factor per step.
  optim::ExponentialLR decay(adam, std::pow(o.adam_gamma, 1.0 / double(o.adam_decay_steps)));
  if (o.adam_iterations > 0)
    phases.push_back({.name = "adam",
                      .optimizer = &adam,
                      .scheduler = o.adam_gamma != 1.0 ? &decay : nullptr,
                      .steps = o.adam_iterations});

  optim::LBFGSOptions lo;
  lo.max_iter = std::max<int64_t>(1, lbfgs_iterations_per_step(o));
  lo.history_size = o.lbfgs_history;
  lo.strong_wolfe = true;
  lo.tolerance_grad = 1e-12;
  lo.tolerance_change = 1e-15;
  optim::LBFGS lbfgs(params, lo);
  if (o.lbfgs_iterations > 0)
    phases.push_back({.name = "lbfgs",
                      .optimizer = &lbfgs,
                      .steps = (o.lbfgs_iterations + lo.max_iter - 1) / lo.max_iter,
                      .closure = true,
                      .log_every = 1,
                      .eval_every = 1,
                      .checkpoint_every = 1});

  const bool has_reference = solver.has_reference();
  train::TrainerOptions t;
  t.output_dir = run.output_dir;
  t.max_steps = run.max_steps;
  t.log_every = std::max<int64_t>(1, o.log_every);
  t.eval_every = t.log_every;
  t.metric = has_reference ? "rel_l2" : "loss";
  t.higher_is_better = false;
  if (o.target_error > 0 && has_reference) t.stop_at = o.target_error;
  t.checkpoint_every = t.log_every;
  t.keep_last = run.keep_last;
  t.quiet = run.quiet;
  t.metadata = run.metadata;
  PinnTask task(solver, solver.derivative_mode());
  train::Trainer trainer(task, std::move(phases), nullptr, t);
  return trainer.fit(resume_from);
}

}  // namespace skiff::science
