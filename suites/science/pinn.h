#pragma once
/// \file pinn.h
/// Training and evaluating a physics-informed network on a Problem.
///
/// The solver owns the network (built on the problem's nondimensional box),
/// samples the constraints once from a seeded generator, and gives the loss
///   loss = sum_c weight_c * sum_i |r_c(x_i)|^2 / N_c
/// that fit_pinn (pinn_training.h) minimizes with Adam and then L-BFGS. Evaluation maps
/// physical points to the network's units and back and compares every field
/// with the problem's reference.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "suites/science/problem.h"

namespace skiff::science {

/// The optimizers of a run (fit_pinn in pinn_training.h).
struct TrainOptions {
  int64_t adam_iterations = 1000;
  double adam_lr = 1e-3;
  /// Exponential decay of the Adam learning rate: lr * gamma^(step / decay_steps).
  double adam_gamma = 1.0;
  int64_t adam_decay_steps = 1000;
  int64_t lbfgs_iterations = 1000;
  int64_t lbfgs_history = 50;
  /// Log and evaluate every N Adam steps and after every N L-BFGS iterations.
  int64_t log_every = 100;
  /// Stop early once the validation error (first field, relative L2) is at or
  /// below this (0: never); checked at every evaluation.
  double target_error = 0;
};

struct FieldError {
  std::string name, unit;
  double rel_l2 = 0;
  double max_abs = 0;
  double ref_max_abs = 0;
};

struct Evaluation {
  std::vector<FieldError> errors;
  std::map<std::string, double> figures;
};

class PinnSolver {
 public:
  /// \param seed seeds the network's initialization and the point sampling.
  PinnSolver(std::shared_ptr<const Problem> problem, NetConfig net, DerivativeMode mode, SamplingPlan plan,
             uint64_t seed);

  /// The total loss (differentiable) and its parts.
  Tensor loss(std::map<std::string, double>* parts = nullptr);

  /// Fields predicted at physical points [N, inputs] (evaluated in chunks).
  std::vector<Field> predict(const Tensor& physical_points);
  /// Relative L2 and max error of every field at the points, plus the problem's figures.
  Evaluation evaluate(const Tensor& physical_points);
  /// Relative L2 of the first field on the validation points (sampled once);
  /// -1 when the problem has no reference.
  double validation_error();
  bool has_reference() const { return validation_reference_.defined(); }
  DerivativeMode derivative_mode() const { return mode_; }

  PinnNet& net() { return *net_; }
  const Problem& problem() const { return *problem_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }

 private:
  std::shared_ptr<const Problem> problem_;
  std::shared_ptr<PinnNet> net_;
  DerivativeMode mode_;
  std::vector<Constraint> constraints_;
  std::vector<Tensor> points_;  // constraint points in the network's dtype
  Tensor validation_points_;    // physical
  Tensor validation_reference_; // first reference field there (undefined without a reference)
};

/// The network configuration for a problem: its inputs/outputs and nondimensional box.
NetConfig net_config_for(const Problem& p, std::vector<int64_t> hidden, Activation act, DType dtype, uint64_t seed);

/// Points of a regular grid over the domain's bounding box ([prod(sizes), dim],
/// row-major, last coordinate fastest), keeping only those inside the domain.
/// \param inside receives, per grid node, whether it was kept (for images).
Tensor grid_points(const Geometry& g, const std::vector<int64_t>& sizes, std::vector<bool>* inside = nullptr);

}  // namespace skiff::science
