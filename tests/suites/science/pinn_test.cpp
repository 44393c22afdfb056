#include <gtest/gtest.h>

#include "framework/core/threading.h"
#include "framework/ops/ops.h"
#include "suites/science/recipe.h"

using namespace skiff;
using namespace skiff::science;

// Shortened versions of the shipped recipes: they must still converge.

TEST(Pinn, PoissonConverges) {
  auto r = parse_recipe(YAML::Load(R"(
problem: {name: poisson, solution: {kx: 1, ky: 1}}
sampling: {interior: 400, boundary: 120}
model: {hidden: [20, 20]}
train: {log_every: 50, adam: {iterations: 200, lr: 0.005}, lbfgs: {iterations: 300}}
)"),
                        "poisson-short");
  auto solver = r.make_solver();
  auto log = solver->train(r.train);
  ASSERT_GE(log.size(), 2u);
  EXPECT_LT(log.back().loss, log.front().loss * 1e-2);
  auto e = solver->evaluate(grid_points(*r.problem->domain(), {41, 41}));
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_LT(e.errors[0].rel_l2, 1e-2);
}

TEST(Pinn, PlateBendingConvergesAndReportsMoments) {
  auto r = parse_recipe(YAML::Load(R"(
problem: {name: plate_bending}
sampling: {interior: 400, boundary: 120}
model: {hidden: [20, 20, 20]}
train: {log_every: 50, adam: {iterations: 200, lr: 0.005}, lbfgs: {iterations: 300}}
)"),
                        "plate-short");
  auto solver = r.make_solver();
  auto log = solver->train(r.train);
  EXPECT_LT(log.back().loss, log.front().loss * 1e-2);
  auto e = solver->evaluate(grid_points(*r.problem->domain(), {21, 31}));
  ASSERT_EQ(e.errors.size(), 3u);  // w, Mx, My
  EXPECT_EQ(e.errors[1].name, "Mx");
  for (const auto& f : e.errors) EXPECT_LT(f.rel_l2, 5e-2) << f.name;
  EXPECT_NEAR(e.figures.at("centre_w_reference"), 4.2993e-3, 1e-6);
  EXPECT_NEAR(e.figures.at("centre_w") / e.figures.at("centre_w_reference"), 1.0, 5e-2);
}

// Taylor mode and nested autograd give the same loss, so the solver can use either.
TEST(Pinn, DerivativeModesGiveTheSameLoss) {
  const char* base = "problem: {name: plate_bending}\nsampling: {interior: 50, boundary: 20}\nmodel: {hidden: [8, 8], dtype: float64, derivatives: ";
  auto jet = parse_recipe(YAML::Load(std::string(base) + "jet}\n"), "a");
  auto ag = parse_recipe(YAML::Load(std::string(base) + "autograd}\n"), "b");
  double lj = jet.make_solver()->loss().item<double>(), la = ag.make_solver()->loss().item<double>();
  EXPECT_NEAR(lj, la, 1e-10 * la);
}
