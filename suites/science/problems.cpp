// The problem registry and what all problems share.
#include <cmath>
#include <numbers>

#include "framework/core/error.h"
#include "framework/core/registry.h"
#include "framework/ops/ops.h"
#include "suites/science/problem.h"
#include "suites/science/problems/problems.h"
#include "framework/config/section.h"

namespace skiff::science {

int64_t SamplingPlan::count(const std::string& key) const {
  auto it = counts.find(key);
  SKIFF_CHECK(it != counts.end(), "sampling: no point count for '{}'", key);
  return it->second;
}

std::vector<Field> Problem::fields(Derivatives& d) const {
  std::vector<Field> out;
  const auto names = outputs();
  const auto sc = scales();
  Tensor u = to(d.values(), DType::Float64);
  for (size_t k = 0; k < names.size(); ++k) out.push_back({names[k], "", select(u, 1, int64_t(k)) * sc.outputs[k]});
  return out;
}

namespace {
struct Entry {
  const char* name;
  std::unique_ptr<Problem> (*make)(const config::Section&);
};
const Entry kProblems[] = {
    {"plate_bending", make_plate_bending}, {"poisson", make_poisson},   {"helmholtz", make_helmholtz},
    {"heat", make_heat},                   {"burgers", make_burgers}, {"navier_stokes", make_navier_stokes},
};
}  // namespace

std::vector<std::string> problem_names() {
  std::vector<std::string> out;
  for (const auto& e : kProblems) out.push_back(e.name);
  return out;
}

std::unique_ptr<Problem> make_problem(const YAML::Node& node, const std::string& recipe_file) {
  config::Section s(node, "problem", recipe_file);
  std::string name = s.text("name");
  for (const auto& e : kProblems)
    if (name == e.name) return e.make(s);
  std::string near = closest_match(name, problem_names());
  throw ValueError(fmt::format("{}: unknown problem '{}'{}; known problems: {}", s.where("name"), name,
                               near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                               fmt::join(problem_names(), ", ")));
}

double poincare_length(const Box& box) {
  double shortest = INFINITY;
  for (size_t i = 0; i < box.lo.size(); ++i) shortest = std::min(shortest, box.hi[i] - box.lo[i]);
  return shortest / std::numbers::pi;
}

Tensor to_physical(const Tensor& nondim, const Scales& s) {
  std::vector<double> sc(s.inputs.begin(), s.inputs.end());
  return to(nondim, DType::Float64) * from_vector(sc);
}

Tensor to_nondimensional(const Tensor& physical, const Scales& s) {
  std::vector<double> inv;
  for (double v : s.inputs) inv.push_back(1.0 / v);
  return to(physical, DType::Float64) * from_vector(inv);
}

}  // namespace skiff::science
