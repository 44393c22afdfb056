#pragma once
/// \file problem.h
/// A physics problem for the PINN solver: domain, equations, scales, reference.
///
/// Problems are posed in physical units (recipes give metres, pascals...), but
/// the network is trained on a nondimensional copy: x = x_hat * L_i and
/// u = u_hat * U_k, with scales the problem derives from its own data so the
/// network sees O(1) inputs, outputs and residuals (see each problem for its
/// rule). Constraints are written in the nondimensional variables; fields for
/// evaluation are returned in physical units.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/rng.h"
#include "suites/science/derivatives.h"
#include "suites/science/geometry.h"

namespace YAML {
class Node;
}

namespace skiff::science {

/// Characteristic scales: physical = nondimensional * scale.
struct Scales {
  std::vector<double> inputs;   ///< one per input coordinate
  std::vector<double> outputs;  ///< one per output
};

/// A loss term: weight * mean(residual^2) over its points.
struct Constraint {
  std::string name;
  Tensor points;  ///< [N, inputs] nondimensional, float64
  std::vector<Partial> needs;
  /// Residuals [N] (or [N, k]) from the derivatives at `points` (given in the
  /// network's dtype). Zero where the constraint holds.
  std::function<Tensor(Derivatives&, const Tensor& points)> residual;
  double weight = 1.0;
};

/// How many points each constraint draws (keys: interior, boundary, initial).
struct SamplingPlan {
  std::map<std::string, int64_t> counts;
  Sampling method = Sampling::LatinHypercube;
  int64_t count(const std::string& key) const;
};

/// A named scalar field on evaluation points, physical units.
struct Field {
  std::string name;
  std::string unit;
  Tensor values;  ///< [N] float64
};

class Problem {
 public:
  virtual ~Problem() = default;
  virtual std::string name() const = 0;
  virtual std::vector<std::string> inputs() const = 0;
  virtual std::vector<std::string> outputs() const = 0;
  /// The domain in physical units.
  virtual std::shared_ptr<const Geometry> domain() const = 0;
  virtual Scales scales() const = 0;
  /// Constraint keys this problem reads from SamplingPlan, with defaults.
  virtual std::map<std::string, int64_t> default_counts() const = 0;
  /// Sampled loss terms (points nondimensional).
  virtual std::vector<Constraint> constraints(const SamplingPlan& plan, Generator& gen) const = 0;
  /// Partials (nondimensional) needed by fields().
  virtual std::vector<Partial> field_needs() const { return {}; }
  /// Predicted fields at physical `points` [N, inputs] from derivatives taken
  /// at the matching nondimensional points: the outputs, then derived quantities.
  virtual std::vector<Field> fields(Derivatives& d) const;
  /// The same fields from the reference solution; empty when there is none.
  virtual std::vector<Field> reference(const Tensor& points) const = 0;
  /// Extra scalar figures (e.g. the centre deflection), predicted and reference.
  virtual std::map<std::string, double> figures(const std::function<std::vector<Field>(const Tensor&)>& predict) const {
    (void)predict;
    return {};
  }
};

/// Builds a problem from a recipe's `problem` section (`name` selects the
/// problem; the other keys are its parameters, checked by the problem).
/// \throws ValueError naming the unknown problem and the known ones.
std::unique_ptr<Problem> make_problem(const YAML::Node& section, const std::string& recipe_file);

/// Names accepted by make_problem.
std::vector<std::string> problem_names();

}  // namespace skiff::science
