#include "suites/science/problems/conditions.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "framework/config/section.h"

namespace skiff::science {

LossWeights::LossWeights(const config::Section& problem, const std::vector<std::string>& terms) {
  config::Section w = problem.section("weights");
  w.allow_only(terms);
  for (const auto& t : terms) weights_[t] = w.positive(t, 1.0);
}

bool BoundaryConditions::any(BoundaryKind k) const { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); }

BoundarySample select_parts(const BoundarySample& b, const std::vector<bool>& keep) {
  std::vector<int64_t> rows;
  const auto part = b.part.to_vector<int64_t>();
  for (size_t i = 0; i < part.size(); ++i)
    if (keep.at(size_t(part[i]))) rows.push_back(int64_t(i));
  Tensor index = from_vector(rows);
  return {index_select(b.points, 0, index), index_select(b.normals, 0, index), index_select(b.part, 0, index)};
}

BoundarySample BoundaryConditions::select(const BoundarySample& b, BoundaryKind k) const {
  std::vector<bool> keep;
  for (BoundaryKind kind : kinds) keep.push_back(kind == k);
  return select_parts(b, keep);
}

BoundaryConditions parse_boundary_conditions(const config::Section& s, const std::string& key,
                                             const std::vector<std::string>& part_names, BoundaryKind fallback) {
  BoundaryConditions bc{std::vector<BoundaryKind>(part_names.size(), fallback)};
  if (!s.has(key)) return bc;
  config::Section m = s.section(key);
  m.allow_only(part_names);
  for (size_t i = 0; i < part_names.size(); ++i) {
    if (!m.has(part_names[i])) continue;
    const std::string kind = m.text(part_names[i]);
    if (kind == "dirichlet")
      bc.kinds[i] = BoundaryKind::Dirichlet;
    else if (kind == "neumann")
      bc.kinds[i] = BoundaryKind::Neumann;
    else
      throw ValueError(fmt::format("{}: unknown boundary condition '{}'; expected dirichlet or neumann",
                                   m.where(part_names[i]), kind));
  }
  return bc;
}

Constraint value_constraint(std::string name, Tensor points, std::vector<int> outputs, Tensor targets,
                            double weight) {
  SKIFF_CHECK(!outputs.empty(), "value constraint '{}': no outputs", name);
  if (targets.dim() == 1) targets = unsqueeze(targets, 1);
  SKIFF_CHECK(targets.size(1) == int64_t(outputs.size()), "value constraint '{}': {} target columns for {} outputs",
              name, targets.size(1), outputs.size());
  Constraint c{std::move(name), std::move(points), {}, nullptr, weight};
  c.residual = [outputs, targets](Derivatives& d, const Tensor& x) {
    Tensor t = to(targets, x.dtype());
    std::vector<Tensor> r;
    for (size_t k = 0; k < outputs.size(); ++k) r.push_back(d.value(outputs[k]) - select(t, 1, int64_t(k)));
    return r.size() == 1 ? r[0] : stack(r, 1);
  };
  return c;
}

Constraint neumann_constraint(std::string name, const BoundarySample& b, int output, int dims, Tensor flux,
                              double weight) {
  const int inputs = int(b.points.size(1));
  SKIFF_CHECK(dims >= 1 && dims <= inputs, "Neumann constraint '{}': {} spatial dims of {} inputs", name, dims, inputs);
  Constraint c{std::move(name), b.points, {}, nullptr, weight};
  for (int i = 0; i < dims; ++i) {
    MultiIndex alpha(size_t(inputs), 0);
    alpha[size_t(i)] = 1;
    c.needs.push_back({output, alpha});
  }
  const Tensor normals = b.normals;
  const auto needs = c.needs;
  c.residual = [normals, needs, flux](Derivatives& d, const Tensor& x) {
    Tensor n = to(normals, x.dtype());
    Tensor dn;
    for (size_t i = 0; i < needs.size(); ++i) {
      Tensor term = d.partial(needs[i]) * select(n, 1, int64_t(i));
      dn = dn.defined() ? dn + term : term;
    }
    return dn - to(flux, x.dtype());
  };
  return c;
}

}  // namespace skiff::science
