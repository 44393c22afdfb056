#pragma once
/// \file conditions.h
/// Building blocks for problems' loss terms: value constraints (Dirichlet
/// data, initial conditions), Neumann constraints, and the per-edge choice of
/// boundary condition a recipe makes.
///
/// Problems with a manufactured or analytic solution take the data of every
/// condition from that solution (g = u* for Dirichlet, g = du*/dn for
/// Neumann), so any mix of edge conditions is consistent with the reference.
#include <map>
#include <string>
#include <vector>

#include "suites/science/problem.h"

namespace skiff::config {
class Section;
}

namespace skiff::science {

/// The `weights` map of a problem section: one positive weight per loss term
/// (1 when not given). \throws ValueError for a term the problem does not have.
class LossWeights {
 public:
  LossWeights() = default;
  LossWeights(const config::Section& problem, const std::vector<std::string>& terms);
  double operator[](const std::string& term) const { return weights_.at(term); }

 private:
  std::map<std::string, double> weights_;
};

enum class BoundaryKind { Dirichlet, Neumann };

/// The condition on each boundary part (index = part id).
struct BoundaryConditions {
  std::vector<BoundaryKind> kinds;
  bool any(BoundaryKind k) const;
  /// Keeps the boundary points whose part has condition `k`.
  BoundarySample select(const BoundarySample& b, BoundaryKind k) const;
};

/// Keeps the boundary points on parts p with keep[p].
BoundarySample select_parts(const BoundarySample& b, const std::vector<bool>& keep);

/// Reads `key` of `s`: a map from part name to "dirichlet" or "neumann";
/// parts not named get `fallback`. Absent key: every part gets `fallback`.
/// \throws ValueError naming the entry for an unknown part or condition.
BoundaryConditions parse_boundary_conditions(const config::Section& s, const std::string& key,
                                             const std::vector<std::string>& part_names, BoundaryKind fallback);

/// The values of outputs `outputs` at `points` must equal `targets`
/// ([N, outputs.size()] or [N] for one output; float64, network units).
Constraint value_constraint(std::string name, Tensor points, std::vector<int> outputs, Tensor targets,
                            double weight);

/// The normal derivative of output `output` over the first `dims` input
/// coordinates (the spatial ones) must equal `flux` ([N] float64).
Constraint neumann_constraint(std::string name, const BoundarySample& b, int output, int dims, Tensor flux,
                              double weight);

}  // namespace skiff::science
