#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/ops/ops.h"
#include "suites/science/recipe.h"
#include "tests/suites/science/training_util.h"

using namespace skiff;
using namespace skiff::science;
using skiff::science::test::train_quietly;

// Shortened versions of the shipped recipes: they must still converge.

TEST(Pinn, PoissonConverges) {
  auto r = parse_recipe(YAML::Load(R"(
problem: {name: poisson, solution: {kx: 1, ky: 1}}
sampling: {interior: 400, boundary: 120}
model: {hidden: [20, 20]}
Global: {print_batch_step: 50}
train: {adam: {iterations: 200, lr: 0.005}, lbfgs: {iterations: 300}}
)"),
                        "poisson-short");
  auto solver = r.make_solver();
  auto run = train_quietly(*solver, r);
  EXPECT_EQ(run.fit.steps, 200 + 6);  // Adam steps, then 300 L-BFGS iterations in steps of 50
  EXPECT_LT(run.loss_after, run.loss_before * 1e-2);
  auto e = solver->evaluate(grid_points(*r.problem->domain(), {41, 41}));
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_LT(e.errors[0].rel_l2, 1e-2);
}

TEST(Pinn, PlateBendingConvergesAndReportsMoments) {
  auto r = parse_recipe(YAML::Load(R"(
problem: {name: plate_bending}
sampling: {interior: 400, boundary: 120}
model: {hidden: [20, 20, 20]}
Global: {print_batch_step: 50}
train: {adam: {iterations: 200, lr: 0.005}, lbfgs: {iterations: 300}}
)"),
                        "plate-short");
  auto solver = r.make_solver();
  auto run = train_quietly(*solver, r);
  EXPECT_LT(run.loss_after, run.loss_before * 1e-2);
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

namespace {

// A small plate run: 30 Adam steps, then 30 L-BFGS iterations in 3 steps of 10.
ScienceRecipe small_plate(
    const std::string& train =
        "{adam: {iterations: 30, lr: 0.01, gamma: 0.5, decay_steps: 20}, lbfgs: {iterations: 30, history: 5}}") {
  return parse_recipe(YAML::Load(R"(
problem: {name: plate_bending}
sampling: {interior: 80, boundary: 40}
model: {hidden: [8, 8]}
Global: {print_batch_step: 10, keep_last: 10}
train: )" + train + "\n"),
                      "small-plate");
}

std::map<std::string, Tensor> weights_after(PinnSolver& s) { return s.net().state_dict(); }

// Other initial weights, so that only a restored checkpoint can end a run where
// the straight run ended.
void scramble(PinnSolver& s) {
  auto w = s.net().state_dict();
  for (auto& [name, t] : w) t = t * 0.5 + 0.01;
  s.net().load_state_dict(w);
}

}  // namespace

// The run's records are the Trainer's: metrics.jsonl with both phases, checkpoints,
// the best model by the validation error.
TEST(Pinn, TrainingWritesTheRunsRecords) {
  test::TempDir dir;
  auto r = small_plate();
  auto solver = r.make_solver();
  auto fit = fit_pinn(*solver, r.train, {.output_dir = dir.path, .quiet = true});
  EXPECT_EQ(fit.steps, 33);
  EXPECT_FALSE(fit.interrupted);
  ASSERT_TRUE(fit.best.count("rel_l2"));
  EXPECT_TRUE(fit.best.count("loss_pde") && fit.best.count("loss_boundary"));
  for (const char* f : {"metrics.jsonl", "train.log", "best_model.safetensors", "latest_model.safetensors",
                        "curves.png", "checkpoints/ckpt-0000000033.safetensors"})
    EXPECT_TRUE(std::filesystem::exists(dir.path / f)) << f;
  std::ifstream in(dir.path / "metrics.jsonl");
  std::set<std::string> phases;
  int evals = 0;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("phase")) phases.insert(j["phase"].get<std::string>());
    if (j.contains("eval")) ++evals;
  }
  EXPECT_EQ(phases, (std::set<std::string>{"adam", "lbfgs"}));
  EXPECT_EQ(evals, 3 + 3);  // every 10 Adam steps, every L-BFGS step
}

// Stopping anywhere (mid-Adam, mid-L-BFGS) and resuming from the checkpoint ends
// with the same weights, bit for bit, as the run that never stopped.
TEST(Pinn, ResumesExactlyInBothPhases) {
  auto r = small_plate();
  test::TempDir straight, stopped;
  auto reference = r.make_solver();
  fit_pinn(*reference, r.train, {.output_dir = straight.path, .quiet = true});

  for (int64_t stop_at : {15, 31, 0}) {  // 15: inside Adam, 31: inside L-BFGS, 0: to the end
    auto solver = r.make_solver();
    auto latest = train::latest_checkpoint(stopped.path);
    if (latest) scramble(*solver);
    auto fit = fit_pinn(*solver, r.train, {.output_dir = stopped.path, .max_steps = stop_at, .quiet = true}, latest);
    EXPECT_EQ(fit.steps, stop_at ? stop_at : 33);
    if (stop_at) continue;
    auto want = weights_after(*reference), got = weights_after(*solver);
    ASSERT_EQ(want.size(), got.size());
    for (const auto& [name, t] : want)
      EXPECT_EQ(to(t, DType::Float64).to_vector<double>(), to(got.at(name), DType::Float64).to_vector<double>())
          << name;
  }
}

TEST(Pinn, StopsEarlyOnceTheTargetErrorIsReached) {
  test::TempDir dir;
  auto r = small_plate("{target_error: 0.9, adam: {iterations: 30, lr: 0.01}, lbfgs: {iterations: 30}}");
  auto solver = r.make_solver();
  auto fit = fit_pinn(*solver, r.train, {.output_dir = dir.path, .quiet = true});
  EXPECT_TRUE(fit.reached_target);
  EXPECT_LT(fit.steps, 33);
  EXPECT_LE(fit.best.at("rel_l2"), 0.9);
}

TEST(Pinn, NothingToTrainIsAnError) {
  test::TempDir dir;
  auto r = small_plate("{adam: {iterations: 0}, lbfgs: {iterations: 0}}");
  auto solver = r.make_solver();
  EXPECT_THROW(fit_pinn(*solver, r.train, {.output_dir = dir.path, .quiet = true}), ValueError);
}
