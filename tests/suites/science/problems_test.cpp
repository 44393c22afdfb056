#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "suites/science/problems/problems.h"
#include "suites/science/recipe.h"
#include "tests/suites/science/training_util.h"

using namespace skiff;
using namespace skiff::science;

namespace {

constexpr double kPi = std::numbers::pi;

using Solution = std::function<Tensor(const Tensor&)>;  // physical [N, d] -> [N, outputs]

std::unique_ptr<Problem> problem_from(const std::string& yaml) {
  return make_problem(YAML::Load(yaml), "problems-test");
}

// The largest |residual| over every constraint when the network is replaced
// by the exact solution mapped to the problem's nondimensional units: zero up
// to rounding if the equations, the scales and the boundary data agree.
double worst_residual(const Problem& p, const Solution& exact, double perturb = 1.0) {
  const Scales s = p.scales();
  std::vector<double> out_scale;
  for (double v : s.outputs) out_scale.push_back(perturb / v);
  Solution hat = [&](const Tensor& xh) { return exact(xh * from_vector(s.inputs)) * from_vector(out_scale); };
  SamplingPlan plan{p.default_counts()};
  for (auto& [key, n] : plan.counts) n = std::min<int64_t>(n, 64);
  Generator gen(7);
  double worst = 0;
  for (const Constraint& c : p.constraints(plan, gen)) {
    auto d = autograd_derivatives(hat, int64_t(p.outputs().size()), c.points);
    Tensor r = c.residual(*d, c.points);
    worst = std::max(worst, amax(abs(detach(r))).item<double>());
  }
  return worst;
}

Tensor col(const Tensor& x, int64_t k) { return select(x, 1, k); }

Solution sin_product(double kx, double ky) {
  return [=](const Tensor& x) { return unsqueeze(sin(col(x, 0) * (kx * kPi)) * sin(col(x, 1) * (ky * kPi)), 1); };
}

// The reference of the problem agrees with the test's own exact solution.
void expect_reference_is(const Problem& p, const Solution& exact) {
  Generator gen(3);
  Tensor pts = p.domain()->sample_interior(50, Sampling::Uniform, gen);
  auto ref = p.reference(pts);
  Tensor mine = exact(pts);
  ASSERT_EQ(int64_t(ref.size()), mine.size(1));
  for (size_t k = 0; k < ref.size(); ++k)
    EXPECT_LT(amax(abs(ref[k].values - col(mine, int64_t(k)))).item<double>(), 1e-12) << ref[k].name;
}

}  // namespace

TEST(Problems, PoissonWithNeumannEdgesHoldsOnItsSolution) {
  auto p = problem_from("{name: poisson, domain: {x: [0, 2], y: [-1, 0.5]}, solution: {kx: 1, ky: 2},"
                        " boundary: {right: neumann, top: neumann}}");
  auto exact = sin_product(1, 2);
  expect_reference_is(*p, exact);
  EXPECT_LT(worst_residual(*p, exact), 1e-9);
  EXPECT_GT(worst_residual(*p, exact, 1.01), 1e-3);  // a wrong solution shows
}

TEST(Problems, HelmholtzHoldsOnItsSolution) {
  auto p = problem_from("{name: helmholtz, solution: {kx: 1, ky: 4}, wavenumber: 3, boundary: {top: neumann}}");
  auto exact = sin_product(1, 4);
  expect_reference_is(*p, exact);
  EXPECT_LT(worst_residual(*p, exact), 1e-9);
  EXPECT_GT(worst_residual(*p, exact, 1.01), 1e-3);
}

TEST(Problems, HeatHoldsOnItsSolutionWithDirichletNeumannAndInitialData) {
  auto p = problem_from("{name: heat, domain: {x: [1, 3], t: [0.5, 2]}, diffusivity: 0.3, solution: {k: 2},"
                        " boundary: {left: neumann, right: dirichlet}}");
  const double w = 2 * kPi / 2.0;
  Solution exact = [=](const Tensor& x) {
    return unsqueeze(sin((col(x, 0) - 1.0) * w) * exp((col(x, 1) - 0.5) * (-0.3 * w * w)), 1);
  };
  expect_reference_is(*p, exact);
  EXPECT_LT(worst_residual(*p, exact), 1e-9);
  EXPECT_GT(worst_residual(*p, exact, 1.01), 1e-3);
  Generator gen(1);
  SamplingPlan plan{p->default_counts()};
  std::vector<std::string> names;
  for (const auto& c : p->constraints(plan, gen)) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"pde", "initial", "boundary", "neumann"}));
}

TEST(Problems, KovasznayFlowHoldsOnItsSolution) {
  auto p = problem_from("{name: navier_stokes, reynolds: 40}");
  const double re = 40, l = re / 2 - std::sqrt(re * re / 4 + 4 * kPi * kPi);
  Solution exact = [=](const Tensor& x) {
    Tensor e = exp(col(x, 0) * l);
    return stack({1.0 - e * cos(col(x, 1) * (2 * kPi)), e * sin(col(x, 1) * (2 * kPi)) * (l / (2 * kPi)),
                  (1.0 - e * e) * 0.5},
                 1);
  };
  expect_reference_is(*p, exact);
  EXPECT_LT(worst_residual(*p, exact), 1e-9);
  EXPECT_GT(worst_residual(*p, exact, 1.01), 1e-3);
}

TEST(Problems, BoundaryConditionErrorsNameTheEntry) {
  try {
    problem_from("{name: poisson, boundary: {lft: neumann}}");
    FAIL() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("problem.boundary.lft"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'left'"), std::string::npos) << e.what();
  }
  try {
    problem_from("{name: heat, boundary: {left: robin}}");
    FAIL() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown boundary condition 'robin'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      problem_from("{name: poisson, boundary: {left: neumann, right: neumann, bottom: neumann, top: neumann}}"),
      ValueError);
}

// Cole-Hopf reference of the Burgers benchmark.
TEST(Problems, ColeHopfBurgersReference) {
  const double nu = 0.01 / kPi;
  for (double x : {-0.7, -0.2, 0.3, 0.9}) EXPECT_NEAR(burgers_cole_hopf(x, 0.0, nu), -std::sin(kPi * x), 1e-15);
  // Odd in x and zero on the boundary.
  for (double t : {0.1, 0.5, 1.0}) {
    EXPECT_NEAR(burgers_cole_hopf(1.0, t, nu), 0.0, 1e-10);
    EXPECT_NEAR(burgers_cole_hopf(-0.4, t, nu), -burgers_cole_hopf(0.4, t, nu), 1e-12);
  }
  // The quadrature has converged: halving the step changes nothing.
  EXPECT_NEAR(burgers_cole_hopf(0.01, 0.8, nu), burgers_cole_hopf(0.01, 0.8, nu, 0.005), 1e-12);
  // The PDE holds (central differences, away from the front).
  for (auto [x, t] : {std::pair{0.5, 0.3}, std::pair{-0.3, 0.7}, std::pair{0.8, 0.9}}) {
    const double h = 1e-4;
    auto u = [&](double a, double b) { return burgers_cole_hopf(a, b, nu); };
    double ut = (u(x, t + h) - u(x, t - h)) / (2 * h), ux = (u(x + h, t) - u(x - h, t)) / (2 * h);
    double uxx = (u(x + h, t) - 2 * u(x, t) + u(x - h, t)) / (h * h);
    EXPECT_NEAR(ut + u(x, t) * ux - nu * uxx, 0.0, 1e-5) << x << ", " << t;
  }
  // The published steepest slope at the origin: |u_x| = 152.00516 at t = 1.6037 / pi
  // (Basdevant et al. 1986).
  const double t = 1.6037 / kPi, h = 1e-7;
  EXPECT_NEAR(burgers_cole_hopf(h, t, nu) / h, -152.00516, 0.01);
}

// A shortened training run: trains the recipe, asserts the loss fell by
// `drop` (after training against before) and returns the evaluation on `grid`.
Evaluation train_short(const std::string& yaml, const std::string& name, double drop,
                       const std::vector<int64_t>& grid) {
  auto r = parse_recipe(YAML::Load(yaml), name);
  auto solver = r.make_solver();
  auto run = test::train_quietly(*solver, r);
  EXPECT_LT(run.loss_after, run.loss_before * drop) << name;
  return solver->evaluate(grid_points(*r.problem->domain(), grid));
}

// Shortened training runs of the new problems: the loss must drop and the
// error reach a level far below the untrained network's. (Burgers at five
// times the benchmark's viscosity: its front is wide enough for a short run.)
TEST(Problems, BurgersAndHeatConvergeShortRuns) {
  auto burgers = train_short(R"(
problem: {name: burgers, viscosity: 0.0159}
sampling: {interior: 1000, boundary: 60, initial: 60}
model: {hidden: [20, 20, 20]}
Global: {print_batch_step: 100}
train: {adam: {iterations: 300, lr: 0.005}, lbfgs: {iterations: 400}}
)",
                             "burgers-short", 0.1, {64, 26});
  EXPECT_LT(burgers.errors[0].rel_l2, 3e-2);

  auto heat = train_short(R"(
problem: {name: heat, boundary: {right: neumann}}
sampling: {interior: 400, boundary: 60, initial: 60}
model: {hidden: [20, 20]}
Global: {print_batch_step: 100}
train: {adam: {iterations: 200, lr: 0.005}, lbfgs: {iterations: 200}}
)",
                          "heat-short", 1e-2, {21, 21});
  EXPECT_LT(heat.errors[0].rel_l2, 1e-2);
}

TEST(Problems, NavierStokesShortRunLearnsAllThreeFields) {
  auto e = train_short(R"(
problem: {name: navier_stokes}
sampling: {interior: 400, boundary: 120}
model: {hidden: [20, 20, 20]}
Global: {print_batch_step: 100}
train: {adam: {iterations: 300, lr: 0.005}, lbfgs: {iterations: 400}}
)",
                       "ns-short", 1e-2, {16, 21});
  ASSERT_EQ(e.errors.size(), 3u);
  for (const auto& f : e.errors) EXPECT_LT(f.rel_l2, 0.1) << f.name;
}
