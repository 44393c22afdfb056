// The Fourier neural operator and its data: the pseudo-spectral Burgers
// solver against the exact Cole-Hopf solution, the random initial conditions
// against their covariance, the spectral layer against a hand-computed mode,
// and a short FNO training run that must learn the operator.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numbers>

#include "framework/autograd/gradcheck.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/ops/ops.h"
#include "suites/science/operator/operator_run.h"
#include "suites/science/recipe.h"

using namespace skiff;
using namespace skiff::science;

namespace {

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return std::sqrt(num / den);
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

// A recipe small enough to train in seconds.
constexpr const char* kSmallRecipe = R"(
task: operator
data: {nu: 0.01, train_samples: 200, test_samples: 50, grid: 64, solver_grid: 256, dt: 1.0e-3, seed: 3}
model: {modes: 8, width: 24, layers: 3, projection: 32}
Global: {epoch_num: 30, print_batch_step: 20}
train: {batch_size: 10, lr: 1.0e-3, step_size: 10, gamma: 0.5}
)";

OperatorRecipe small_recipe() { return parse_operator_recipe(YAML::Load(kSmallRecipe), "small.yml"); }

}  // namespace

TEST(BurgersSolver, MatchesColeHopfSolution) {
  for (double nu : {0.1, 0.02}) {
    Generator gen(11);
    auto u0 = gaussian_random_field(1024, gen);
    auto u = solve_burgers_periodic(u0, {.nu = nu, .t_end = 1.0, .dt = 2.5e-4});
    auto exact = burgers_periodic_cole_hopf(u0, nu, 1.0);
    EXPECT_LT(rel_l2(u, exact), nu == 0.1 ? 1e-8 : 1e-6) << "nu " << nu;
    std::printf("nu %g: solver vs Cole-Hopf rel L2 %.2e\n", nu, rel_l2(u, exact));
    // The solution changed: a solver returning u0 would fail here.
    EXPECT_GT(rel_l2(u0, exact), 0.05) << "nu " << nu;
  }
}

TEST(BurgersSolver, ConservesMeanAndDissipatesEnergy) {
  Generator gen(5);
  auto u0 = gaussian_random_field(256, gen);
  auto energy = [](const std::vector<double>& u) {
    double e = 0;
    for (double v : u) e += v * v;
    return e;
  };
  double previous = energy(u0);
  for (double t : {0.25, 0.5, 1.0}) {
    auto u = solve_burgers_periodic(u0, {.nu = 0.1, .t_end = t, .dt = 1e-3});
    EXPECT_NEAR(mean_of(u), 0.0, 1e-12);
    EXPECT_LT(energy(u), previous) << "t " << t;
    previous = energy(u);
  }
}

TEST(BurgersSolver, RejectsAnUnstableStepAndBadGrids) {
  Generator gen(5);
  auto u0 = gaussian_random_field(1024, gen);
  try {
    solve_burgers_periodic(u0, {.nu = 0.1, .t_end = 1.0, .dt = 0.05});
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("use dt <="), std::string::npos) << e.what();
  }
  EXPECT_THROW(solve_burgers_periodic(std::vector<double>(7, 0.0), {}), ValueError);
  EXPECT_THROW(solve_burgers_periodic(u0, {.nu = -1}), ValueError);
  EXPECT_THROW(make_burgers_dataset(4, 96, 256, 0, {}), ValueError);  // 256 is not a multiple of 96
}

// Var u(x) = sum_k 2 lambda_k over the modes drawn, for every x.
TEST(GaussianRandomField, HasTheRequestedCovariance) {
  const int64_t n = 64, draws = 4000;
  RandomFieldOptions o;
  double expected = 0;
  for (int64_t k = 1; k <= n / 3; ++k) {
    const double kk = 2 * std::numbers::pi * double(k);
    expected += 2 * std::pow(o.sigma * std::pow(kk * kk + o.tau * o.tau, -o.alpha / 2), 2);
  }
  Generator gen(1);
  double var0 = 0, var_mid = 0;
  for (int64_t d = 0; d < draws; ++d) {
    auto u = gaussian_random_field(n, gen, o);
    EXPECT_NEAR(mean_of(u), 0.0, 1e-12);
    var0 += u[0] * u[0] / double(draws);
    var_mid += u[n / 2] * u[n / 2] / double(draws);
  }
  EXPECT_NEAR(var0 / expected, 1.0, 0.08);
  EXPECT_NEAR(var_mid / expected, 1.0, 0.08);
}

TEST(BurgersDataset, IsAPureFunctionOfTheSeed) {
  BurgersSolverOptions o{.nu = 0.1, .t_end = 0.5, .dt = 1e-3};
  const int saved = num_threads();
  set_num_threads(1);
  auto one = make_burgers_dataset(6, 32, 128, 9, o);
  set_num_threads(2);
  auto two = make_burgers_dataset(6, 32, 128, 9, o);
  set_num_threads(saved);
  EXPECT_EQ(one.inputs.to_vector<double>(), two.inputs.to_vector<double>());
  EXPECT_EQ(one.targets.to_vector<double>(), two.targets.to_vector<double>());
  auto other = make_burgers_dataset(6, 32, 128, 10, o);
  EXPECT_NE(one.inputs.to_vector<double>(), other.inputs.to_vector<double>());
  EXPECT_EQ(one.inputs.shape(), (Shape{6, 32}));
  // Subsampled from the solver's grid: every 4th point of the full solution.
  auto full = make_burgers_dataset(6, 128, 128, 9, o);
  auto f = full.targets.to_vector<double>(), s = one.targets.to_vector<double>();
  for (int64_t j = 0; j < 32; ++j) EXPECT_EQ(s[size_t(j)], f[size_t(4 * j)]);
}

// One input channel, one output channel: a single mode k with weight w turns
// cos(2 pi k x) into Re(w e^{2 pi i k x}) = Re w cos - Im w sin; modes beyond
// `modes` are dropped.
TEST(SpectralConv1d, MixesTheLowModesOnly) {
  const int64_t n = 32;
  Generator gen(0);
  SpectralConv1d layer(1, 1, 4, gen);
  std::vector<float> wr(4, 0.f), wi(4, 0.f);
  wr[3] = 0.5f, wi[3] = -2.f;  // mode 3: w = 0.5 - 2i
  layer.weight_real = from_vector(wr, Shape{4, 1, 1});
  layer.weight_imag = from_vector(wi, Shape{4, 1, 1});
  std::vector<float> x(n);
  for (int64_t j = 0; j < n; ++j)
    x[size_t(j)] = float(std::cos(2 * std::numbers::pi * 3 * double(j) / double(n)) +
                         std::cos(2 * std::numbers::pi * 6 * double(j) / double(n)));  // mode 6 >= modes
  Tensor y;
  {
    NoGradGuard g;
    y = layer(from_vector(x, Shape{1, n, 1}));
  }
  auto v = y.to_vector<double>();
  for (int64_t j = 0; j < n; ++j) {
    const double th = 2 * std::numbers::pi * 3 * double(j) / double(n);
    EXPECT_NEAR(v[size_t(j)], 0.5 * std::cos(th) + 2.0 * std::sin(th), 1e-5) << j;
  }
  EXPECT_THROW(layer(zeros(Shape{1, 4, 1})), ShapeError);  // 3 frequencies < 4 modes
  EXPECT_THROW(layer(zeros(Shape{1, n, 2})), ShapeError);
}

TEST(SpectralConv1d, GradientsMatchFiniteDifferences) {
  Generator gen(2);
  SpectralConv1d layer(2, 3, 3, gen);
  auto fn = [&](const std::vector<Tensor>& in) {
    layer.weight_real = in[1];
    layer.weight_imag = in[2];
    return layer(in[0]);
  };
  Tensor x = randn(Shape{2, 8, 2}, DType::Float64, &gen).set_requires_grad();
  Tensor wr = randn(Shape{3, 2, 3}, DType::Float64, &gen).set_requires_grad();
  Tensor wi = randn(Shape{3, 2, 3}, DType::Float64, &gen).set_requires_grad();
  auto r = autograd::gradcheck(fn, {x, wr, wi});
  EXPECT_TRUE(r.ok) << r.message;
}

// The shortened recipe: the operator must beat the identity guess
// u(., T) = u0 by far and keep improving; the saved model reproduces its
// predictions and evaluates on a finer grid than it was trained on.
TEST(Fno, ShortTrainingLearnsTheBurgersOperator) {
  OperatorRecipe r = small_recipe();
  auto train = make_operator_data(r, DataSplit::Train);
  auto test = make_operator_data(r, DataSplit::Test);
  double identity = 0;
  {
    auto a = test.inputs.to_vector<double>(), u = test.targets.to_vector<double>();
    const size_t n = size_t(r.grid);
    for (size_t i = 0; i < a.size() / n; ++i)
      identity += rel_l2({a.begin() + long(i * n), a.begin() + long((i + 1) * n)},
                         {u.begin() + long(i * n), u.begin() + long((i + 1) * n)});
    identity /= double(a.size() / n);
  }
  Fno1d model(r.model);
  const double untrained = evaluate_operator(model, test).mean_rel_l2;
  const auto dir = std::filesystem::temp_directory_path() / "skiff_fno_test";
  std::filesystem::remove_all(dir);
  auto fit = fit_operator(model, r, train, test, {.output_dir = dir / "run", .quiet = true});
  EXPECT_EQ(fit.steps, r.epochs * 200 / 10);
  const double trained = evaluate_operator(model, test).mean_rel_l2;
  ASSERT_EQ(fit.best_step >= 0, true);
  EXPECT_LE(fit.best.at("rel_l2"), trained);  // evaluated every epoch, the last included
  EXPECT_LT(trained, 0.2 * identity) << "identity " << identity;
  EXPECT_LT(trained, 0.1 * untrained);
  EXPECT_LT(trained, 0.08);
  for (const char* f : {"metrics.jsonl", "best_model.safetensors", "curves.png"})
    EXPECT_TRUE(std::filesystem::exists(dir / "run" / f)) << f;

  const std::string path = (dir / "model.safetensors").string();
  save_operator(path, model, r);
  ASSERT_TRUE(is_operator_file(path));
  OperatorModel loaded = load_operator(path);
  EXPECT_DOUBLE_EQ(evaluate_operator(*loaded.model, test).mean_rel_l2, trained);
  // Zero-shot super-resolution: the same weights on 4x the points.
  auto fine = make_operator_data(loaded.recipe, DataSplit::Test, 256);
  EXPECT_LT(evaluate_operator(*loaded.model, fine).mean_rel_l2, 2 * trained);
  auto images = write_operator_images(dir.string(), *loaded.model, loaded.recipe, test);
  ASSERT_EQ(images.size(), 1u);
  EXPECT_GT(std::filesystem::file_size(images[0]), 1000u);
  std::filesystem::remove_all(dir);
}

// Stopped mid-epoch and resumed: the same weights as the run that never stopped.
TEST(Fno, ResumesExactlyMidEpoch) {
  OperatorRecipe r = parse_operator_recipe(YAML::Load(R"(
task: operator
data: {nu: 0.01, train_samples: 40, test_samples: 10, grid: 32, solver_grid: 64, dt: 1.0e-3, seed: 3}
model: {modes: 4, width: 8, layers: 2, projection: 8}
Global: {epoch_num: 3, print_batch_step: 2}
train: {batch_size: 8, step_size: 1, gamma: 0.5}
)"),
                                           "tiny.yml");
  auto train = make_operator_data(r, DataSplit::Train);
  auto test = make_operator_data(r, DataSplit::Test);
  const auto dir = std::filesystem::temp_directory_path() / "skiff_fno_resume_test";
  std::filesystem::remove_all(dir);
  Fno1d straight(r.model);
  fit_operator(straight, r, train, test, {.output_dir = dir / "straight", .quiet = true});
  OperatorRecipe stop = r;
  stop.max_steps = 7;  // inside the second epoch (5 batches each)
  Fno1d first(r.model);
  fit_operator(first, stop, train, test, {.output_dir = dir / "stopped", .quiet = true});
  FnoConfig other = r.model;
  other.seed += 1;  // other initial weights: only the checkpoint can make the run end where the straight one did
  Fno1d resumed(other);
  auto fit = fit_operator(resumed, r, train, test, {.output_dir = dir / "stopped", .quiet = true},
                          train::latest_checkpoint(dir / "stopped"));
  EXPECT_EQ(fit.steps, 15);
  auto want = straight.state_dict(), got = resumed.state_dict();
  for (const auto& [name, t] : want)
    EXPECT_EQ(to(t, DType::Float64).to_vector<double>(), to(got.at(name), DType::Float64).to_vector<double>())
        << name;
  std::filesystem::remove_all(dir);
}

TEST(OperatorRecipe, ErrorsNameTheKey) {
  EXPECT_NE([] {
    try {
      parse_operator_recipe(YAML::Load("task: operator\ntrain: {epochs: 3}"), "r.yml");
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  }().find("train.epochs moved to Global.epoch_num"),
            std::string::npos);
  auto error_of = [](const std::string& yaml) {
    try {
      parse_operator_recipe(YAML::Load(yaml), "r.yml");
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("task: operator\nmodel: {widht: 3}").find("did you mean 'width'"), std::string::npos);
  EXPECT_NE(error_of("task: operator\ndata: {grid: 96, solver_grid: 256}").find("data.solver_grid"),
            std::string::npos);
  EXPECT_NE(error_of("task: operator\ndata: {equation: kdv}").find("unknown equation 'kdv'"), std::string::npos);
  EXPECT_NE(error_of("task: operator\ndata: {grid: 16}\nmodel: {modes: 12}").find("do not fit"), std::string::npos);
  EXPECT_NE(error_of("data: {}").find("task: operator"), std::string::npos);
  // The PINN parser refuses operator recipes, and unknown tasks are named.
  EXPECT_THROW(parse_recipe(YAML::Load("task: operator\nproblem: {name: poisson}"), "r.yml"), ValueError);
  try {
    recipe_task(YAML::Load("task: opertor"), "r.yml");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown task 'opertor'"), std::string::npos) << e.what();
  }
}
