#include "suites/science/runs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <type_traits>

#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/ops/ops.h"
#include "suites/science/operator/operator_run.h"
#include "suites/science/pinn_training.h"
#include "suites/science/report.h"

namespace skiff::science {

namespace {

std::vector<std::string> evaluation_lines(const Evaluation& e) {
  std::vector<std::string> lines;
  for (const auto& f : e.errors)
    lines.push_back(fmt::format("{:<6} rel L2 {:.3e}   max |error| {:.3e} {}  (max |reference| {:.4g})", f.name,
                                f.rel_l2, f.max_abs, f.unit, f.ref_max_abs));
  for (const auto& [k, v] : e.figures) lines.push_back(fmt::format("{:<28} {:.6g}", k, v));
  return lines;
}

std::map<std::string, double> evaluation_metrics(const Evaluation& e) {
  std::map<std::string, double> m = e.figures;
  for (const auto& f : e.errors) {
    m[f.name + " rel_l2"] = f.rel_l2;
    m[f.name + " max_abs"] = f.max_abs;
  }
  return m;
}

void print_lines(const std::vector<std::string>& lines) {
  for (const auto& l : lines) fmt::print("{}\n", l);
}

// "a,b,c" as numbers of type T (int64_t or double); the error names the flag and
// what it expects.
template <typename T>
std::vector<T> parse_list(const std::string& text, const std::string& flag) {
  std::vector<T> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    try {
      size_t used = 0;
      if constexpr (std::is_integral_v<T>) {
        out.push_back(std::stoll(item, &used));
      } else {
        out.push_back(std::stod(item, &used));
      }
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw ValueError(fmt::format("{}: expected {} separated by commas, got '{}'", flag,
                                   std::is_integral_v<T> ? "integers" : "numbers", text));
    }
  }
  return out;
}

std::vector<int64_t> parse_sizes(const std::string& text, const std::string& flag) {
  return parse_list<int64_t>(text, flag);
}

// Metrics, pictures and (for training) the solution, all under `dir`.
nlohmann::json write_outputs(const std::string& dir, PinnSolver& solver, const ScienceRecipe& recipe,
                             const Evaluation& e, const std::vector<int64_t>& grid) {
  std::filesystem::create_directories(dir);
  nlohmann::json j{{"problem", recipe.problem->name()},
                   {"recipe", recipe.file},
                   {"threads", num_threads()},
                   {"eval_grid", grid},
                   {"evaluation", evaluation_json(e)}};
  auto images = write_field_images(dir, solver, grid);
  j["images"] = images;
  return j;
}

std::string operator_evaluation_line(const OperatorEvaluation& e) {
  return fmt::format("u      rel L2 {:.3e} (mean over {} held-out samples on {} points; median {:.3e}, max {:.3e})",
                     e.mean_rel_l2, e.samples, e.grid, e.median_rel_l2, e.max_rel_l2);
}

}  // namespace

train::FitResult train_operator_recipe(const OperatorRecipe& recipe, std::string output, bool quiet,
                                       const std::optional<std::filesystem::path>& resume_from) {
  if (output.empty()) output = recipe.output_dir;
  if (!quiet)
    fmt::print(stderr,
               "sci: Fourier neural operator for Burgers (nu {:g}, t {:g}; {}), {} modes x width {} x {} layers, "
               "{} threads, output {}\n",
               recipe.solver.nu, recipe.solver.t_end, recipe.file, recipe.model.modes, recipe.model.width,
               recipe.model.layers, num_threads(), output);
  const auto start = std::chrono::steady_clock::now();
  if (!quiet)
    fmt::print(stderr, "sci: solving {} + {} Burgers problems on {} points (pseudo-spectral, dt {:g}) ...\n",
               recipe.train_samples, recipe.test_samples, recipe.solver_grid, recipe.solver.dt);
  OperatorDataset train = make_operator_data(recipe, DataSplit::Train);
  OperatorDataset test = make_operator_data(recipe, DataSplit::Test);
  const auto data_done = std::chrono::steady_clock::now();
  const double data_seconds = std::chrono::duration<double>(data_done - start).count();
  if (!quiet) fmt::print(stderr, "sci: data ready in {:.1f} s\n", data_seconds);
  Fno1d model(recipe.model);
  train::FitResult fit = fit_operator(
      model, recipe, train, test,
      {.output_dir = output, .quiet = quiet, .metadata = {{kModelRecipeKey, recipe_text(recipe.root)}}}, resume_from);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - data_done).count();
  if (fit.interrupted) return fit;  // the checkpoint is saved; --resume finishes the run
  OperatorEvaluation e = evaluate_operator(model, test);
  std::filesystem::create_directories(output);
  const std::string path = (std::filesystem::path(output) / "model.safetensors").string();
  save_operator(path, model, recipe);
  nlohmann::json j{{"task", "operator"},
                   {"recipe", recipe.file},
                   {"threads", num_threads()},
                   {"data", {{"train_samples", recipe.train_samples},
                             {"test_samples", recipe.test_samples},
                             {"grid", recipe.grid},
                             {"solver_grid", recipe.solver_grid},
                             {"seconds", data_seconds}}},
                   {"train", {{"seconds", seconds}, {"steps", fit.steps}, {"best_step", fit.best_step},
                              {"best", fit.best}, {"records", "metrics.jsonl"}}},
                   {"evaluation", operator_evaluation_json(e)},
                   {"images", write_operator_images(output, model, recipe, test)},
                   {"model", path}};
  write_json((std::filesystem::path(output) / "metrics.json").string(), j);
  fmt::print("trained the Fourier neural operator in {:.1f} s (data {:.1f} s); wrote {}/metrics.json, "
             "model.safetensors and samples.png\n",
             seconds, data_seconds, output);
  fmt::print("{}\n", operator_evaluation_line(e));
  return fit;
}

namespace {

SavedModelEvaluation evaluate_operator_model(const std::string& path, const std::string& grid_text,
                                             const std::string& output) {
  OperatorModel m = load_operator(path);
  int64_t grid = m.recipe.grid;
  if (!grid_text.empty()) {
    auto sizes = parse_sizes(grid_text, "--grid");
    SKIFF_CHECK(sizes.size() == 1, "--grid: an operator model on a 1-D grid takes one size, got '{}'", grid_text);
    grid = sizes[0];
    SKIFF_CHECK(grid >= 2 * (m.recipe.model.modes - 1) && m.recipe.solver_grid % grid == 0,
                "--grid {}: must divide the recipe's solver grid ({}) and hold the model's {} modes (>= {} points)",
                grid, m.recipe.solver_grid, m.recipe.model.modes, 2 * (m.recipe.model.modes - 1));
  }
  OperatorDataset test = make_operator_data(m.recipe, DataSplit::Test, grid);
  OperatorEvaluation e = evaluate_operator(*m.model, test);
  if (!output.empty()) {
    nlohmann::json j{{"task", "operator"}, {"model", path}, {"evaluation", operator_evaluation_json(e)},
                     {"images", write_operator_images(output, *m.model, m.recipe, test)}};
    write_json((std::filesystem::path(output) / "metrics.json").string(), j);
  }
  return {.title = fmt::format("Fourier neural operator from {} on the held-out set", path),
          .lines = {operator_evaluation_line(e)},
          .json = operator_evaluation_json(e),
          .metrics = {{"u rel_l2", e.mean_rel_l2}, {"u median_rel_l2", e.median_rel_l2},
                      {"u max_rel_l2", e.max_rel_l2}, {"samples", double(e.samples)}}};
}

}  // namespace

train::FitResult train_pinn_recipe(const ScienceRecipe& recipe, std::string output, bool quiet,
                                   const std::optional<std::filesystem::path>& resume_from) {
  if (output.empty()) output = recipe.output_dir;
  auto solver = recipe.make_solver();
  if (!quiet)
    fmt::print(stderr,
               "sci: {} ({}), network {} -> {} -> {}, {} derivatives, {} threads; Adam {} steps, then L-BFGS {} "
               "iterations in steps of {}; output {}\n",
               recipe.problem->name(), recipe.file, recipe.problem->inputs().size(), fmt::join(recipe.hidden, "x"),
               recipe.problem->outputs().size(),
               recipe.derivatives == DerivativeMode::Jet ? "Taylor-mode" : "autograd", num_threads(),
               recipe.train.adam_iterations, recipe.train.lbfgs_iterations, lbfgs_iterations_per_step(recipe.train),
               output);
  const auto start = std::chrono::steady_clock::now();
  train::FitResult fit = fit_pinn(*solver, recipe.train,
                                  {.output_dir = output,
                                   .keep_last = recipe.keep_last,
                                   .max_steps = recipe.max_steps,
                                   .quiet = quiet,
                                   .metadata = {{kModelRecipeKey, recipe_text(recipe.root)}}},
                                  resume_from);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (fit.interrupted) return fit;  // the checkpoint is saved; --resume finishes the run
  Evaluation e = solver->evaluate(grid_points(*recipe.problem->domain(), recipe.eval_grid));
  nlohmann::json j = write_outputs(output, *solver, recipe, e, recipe.eval_grid);
  j["train"] = {{"seconds", seconds}, {"steps", fit.steps}, {"best_step", fit.best_step}, {"best", fit.best},
                {"records", "metrics.jsonl"}};
  const std::string solution = (std::filesystem::path(output) / "solution.safetensors").string();
  save_solution(solution, *solver, recipe);
  j["solution"] = solution;
  write_json((std::filesystem::path(output) / "metrics.json").string(), j);
  fmt::print("trained {} in {:.1f} s; wrote {}/metrics.json, solution.safetensors and {} image(s)\n",
             recipe.problem->name(), seconds, output, j["images"].size());
  print_lines(evaluation_lines(e));
  return fit;
}

SavedModelEvaluation evaluate_saved_model(const std::string& model, const std::string& grid_text,
                                          const std::string& output) {
  if (is_operator_file(model)) return evaluate_operator_model(model, grid_text, output);
  Solution s = load_solution(model);
  std::vector<int64_t> grid = grid_text.empty() ? s.recipe.eval_grid : parse_sizes(grid_text, "--grid");
  Evaluation e = s.solver->evaluate(grid_points(*s.recipe.problem->domain(), grid));
  if (!output.empty()) {
    nlohmann::json j = write_outputs(output, *s.solver, s.recipe, e, grid);
    j["solution"] = model;
    write_json((std::filesystem::path(output) / "metrics.json").string(), j);
  }
  return {.title = fmt::format("{} from {} on a {} grid", s.recipe.problem->name(), model, fmt::join(grid, "x")),
          .lines = evaluation_lines(e),
          .json = evaluation_json(e),
          .metrics = evaluation_metrics(e)};
}

std::string query_solution(const std::string& model, const std::vector<std::string>& points,
                           const std::string& grid_text) {
  SKIFF_CHECK(!is_operator_file(model),
              "sci query: '{}' is a neural-operator model; it maps whole functions, not points (use sci eval)", model);
  Solution s = load_solution(model);
  const auto& problem = *s.recipe.problem;
  const int64_t d = int64_t(problem.inputs().size());
  Tensor pts;
  if (!grid_text.empty()) {
    pts = grid_points(*problem.domain(), parse_sizes(grid_text, "--grid"));
  } else {
    SKIFF_CHECK(!points.empty(), "sci query: give --points or --grid");
    std::vector<double> flat;
    for (const auto& p : points) {
      auto v = parse_list<double>(p, "--points");
      SKIFF_CHECK(int64_t(v.size()) == d, "--points '{}': {} coordinates for a problem with inputs {}", p, v.size(),
                  fmt::join(problem.inputs(), ", "));
      SKIFF_CHECK(problem.domain()->contains(v.data(), 1e-9), "--points '{}' lies outside the {} domain", p,
                  problem.domain()->name());
      flat.insert(flat.end(), v.begin(), v.end());
    }
    pts = from_vector(flat, Shape{int64_t(points.size()), d});
  }
  auto fields = s.solver->predict(pts);
  std::string out = fmt::format("{}", fmt::join(problem.inputs(), ","));
  for (const auto& f : fields) out += "," + f.name;
  out += "\n";
  auto p = pts.to_vector<double>();
  std::vector<std::vector<double>> cols;
  for (const auto& f : fields) cols.push_back(f.values.to_vector<double>());
  for (int64_t i = 0; i < pts.size(0); ++i) {
    for (int64_t k = 0; k < d; ++k) out += fmt::format("{}{:.9g}", k ? "," : "", p[i * d + k]);
    for (const auto& c : cols) out += fmt::format(",{:.9g}", c[i]);
    out += "\n";
  }
  return out;
}

}  // namespace skiff::science
