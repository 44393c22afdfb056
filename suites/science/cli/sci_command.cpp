// `skiff sci`: the science suite's own commands (`skiff train -c` runs its recipes too).
//   skiff sci train -c configs/science/plate_bending.yml [-o train.adam.iterations=500]
//   skiff sci eval --model output/plate_bending/solution.safetensors
//   skiff sci query --model ... --points 1,1.5 --points 0.5,0.5   (or --grid 11,11 --csv out.csv)
// Recipes with `task: operator` (configs/science/fno_burgers.yml) train and
// evaluate a neural operator instead; their model is model.safetensors.
#include <fmt/format.h>

#include <algorithm>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/train/recipe_runner.h"
#include "framework/io/file.h"
#include "suites/science/problem.h"
#include "suites/science/runs.h"

namespace skiff::science {
namespace {

// `sci train` reads a recipe without a `task:` as a PINN recipe, as it always has.
// `resume`: a checkpoint, or "auto" for the run's latest; empty: a new run.
void run_train(const std::string& config, const std::vector<std::string>& overrides, std::string output, bool quiet,
               const std::string& resume) {
  YAML::Node root = read_recipe_yaml(config, overrides);
  train::TrainRequest request;
  if (resume == "auto") request.resume_latest = true;
  else if (!resume.empty()) request.resume = resume;
  train::FitResult fit;
  if (recipe_task(root, config) == "operator") {
    OperatorRecipe recipe = parse_operator_recipe(root, config);
    if (output.empty()) output = recipe.output_dir;
    fit = train_operator_recipe(recipe, output, quiet, train::resume_checkpoint(request, output));
  } else {
    ScienceRecipe recipe = parse_recipe(root, config);
    if (output.empty()) output = recipe.output_dir;
    fit = train_pinn_recipe(recipe, output, quiet, train::resume_checkpoint(request, output));
  }
  if (fit.interrupted) std::exit(kExitInterrupted);
}

void run_eval(const std::string& model, const std::string& grid, const std::string& output, bool json) {
  SavedModelEvaluation e = evaluate_saved_model(model, grid, output);
  if (json) {
    fmt::print("{}\n", e.json.dump(2));
    return;
  }
  fmt::print("{}\n", e.title);
  for (const auto& line : e.lines) fmt::print("{}\n", line);
}

void run_query(const std::string& model, const std::vector<std::string>& points, const std::string& grid,
               const std::string& csv) {
  std::string out = query_solution(model, points, grid);
  if (csv.empty()) {
    fmt::print("{}", out);
    return;
  }
  io::write_file_atomic(csv, out);
  fmt::print("wrote {} points to {}\n", std::count(out.begin(), out.end(), '\n') - 1, csv);
}

void add_sci_command(CLI::App& app) {
  auto* sci = app.add_subcommand("sci", "Scientific computing: physics-informed networks from YAML recipes");
  sci->require_subcommand(1);
  struct Options {
    std::string config, output, model, grid, csv, resume;
    std::vector<std::string> overrides, points;
    bool quiet = false, json = false;
  };
  auto o = std::make_shared<Options>();

  auto* train = sci->add_subcommand(
      "train", fmt::format("Train a PINN from a recipe (problems: {}); writes metrics.json, solution.safetensors and "
                           "one PNG per field (prediction, reference, error) to the output directory. A recipe with "
                           "'task: operator' trains a Fourier neural operator instead (model.safetensors, samples.png)",
                           fmt::join(science::problem_names(), ", ")));
  train->add_option("-c,--config", o->config, "Recipe YAML file (e.g. configs/science/plate_bending.yml)")
      ->required()
      ->check(CLI::ExistingFile);
  train->add_option("-o,--override", o->overrides,
                    "Override a recipe value, key.path=value (YAML value), e.g. -o train.adam.iterations=500");
  train->add_option("--output", o->output, "Output directory (default: the recipe's Global.save_model_dir)");
  train->add_option("--resume", o->resume,
                    "Continue a run from a checkpoint file, or (with no value or 'auto') from the latest one in "
                    "the output directory's checkpoints/")
      ->expected(0, 1)
      ->default_str("auto");
  train->add_flag("-q,--quiet", o->quiet, "Do not print training progress");
  train->callback([o, train] {
    run_train(o->config, o->overrides, o->output, o->quiet,
              train->count("--resume") ? (o->resume.empty() ? "auto" : o->resume) : "");
  });

  auto* eval = sci->add_subcommand("eval",
                                   "Re-evaluate a saved solution against the problem's reference (an operator model: "
                                   "on its held-out set, regenerated from the stored recipe)");
  eval->add_option("--model", o->model, "solution.safetensors or model.safetensors written by `skiff sci train`")
      ->required()
      ->check(CLI::ExistingFile);
  eval->add_option("--grid", o->grid,
                   "Evaluation grid, e.g. 201,301 (default: the recipe's eval.grid); for an operator one size, e.g. "
                   "512, that divides its solver grid");
  eval->add_option("--output", o->output, "Also write metrics.json and the field images to this directory");
  eval->add_flag("--json", o->json, "Print the evaluation as JSON");
  eval->callback([o] { run_eval(o->model, o->grid, o->output, o->json); });

  auto* query = sci->add_subcommand("query", "Print a saved solution's fields at points or on a grid (CSV)");
  query->add_option("--model", o->model, "solution.safetensors written by `skiff sci train`")->required();
  query->add_option("--points", o->points, "A point in physical units, coordinates separated by commas (repeatable)");
  query->add_option("--grid", o->grid, "A regular grid over the domain, e.g. 11,16");
  query->add_option("--csv", o->csv, "Write the CSV to this file instead of stdout");
  query->callback([o] { run_query(o->model, o->points, o->grid, o->csv); });
}

}  // namespace
}  // namespace skiff::science

SKIFF_REGISTER_COMMAND("sci", skiff::science::add_sci_command);
