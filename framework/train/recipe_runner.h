#pragma once
/// \file recipe_runner.h
/// One entry point for every suite's YAML recipes: `skiff train | eval |
/// predict | export -c RECIPE` load the file, read which task it describes and
/// hand it to the RecipeRunner that suite registered for that task. Nothing
/// here (or in apps/) knows a suite by name.
///
/// The task of a recipe is its top-level `task:` key, else
/// `Architecture.model_type` (PaddleOCR's recipes say `model_type: rec`):
///
///   task: pinn                      # configs/science/plate_bending.yml
///   Architecture: {model_type: det} # configs/ocr/det_db_synth.yml
///
/// A suite registers a runner per task in its register.cpp:
///
///   SKIFF_REGISTER_RECIPE_RUNNER("rec", RecognitionRunner);
///
/// where RecognitionRunner derives from RecipeRunner below.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "framework/config/schema.h"
#include "framework/config/section.h"
#include "framework/core/registry.h"
#include "framework/train/trainer.h"

namespace skiff::train {

/// A recipe file after its `_BASE_` files and the -o overrides are merged in.
struct Recipe {
  YAML::Node root;
  std::string file;
  /// A top-level section (empty when absent).
  config::Section section(const std::string& key) const { return top().section(key); }
  config::Section top() const { return config::Section(root, "", file); }
};

/// The task the recipe describes (see the file comment).
/// \throws ValueError naming the file when it names none.
std::string recipe_task(const Recipe& recipe);

/// What `skiff train` asks for besides the recipe.
struct TrainRequest {
  std::optional<std::filesystem::path> resume;  ///< continue from this checkpoint
  bool resume_latest = false;                   ///< continue from the run's latest checkpoint
  bool quiet = false;                           ///< print nothing but errors
};

/// What `skiff predict` asks for.
struct PredictRequest {
  /// The inputs, as the task reads them (image files, points, ...); empty: the recipe's default.
  std::vector<std::string> inputs;
  /// Also write pictures of the results here (tasks that draw them); empty: none.
  std::filesystem::path save_dir;
};

/// What `skiff export` wrote.
struct ExportResult {
  std::vector<std::filesystem::path> files;
  /// Largest |exported - eager| on the check input (negative: no check ran).
  double max_abs_diff = -1;
  /// What was compared, for the message ("ONNX vs eager").
  std::string check = "ONNX vs eager";
};

/// Where a run writes, and the recipe key (a dotted path, as -o takes it) that sets it.
struct RunOutput {
  std::filesystem::path dir;
  std::string key;
};

/// Runs the recipes of one task. A runner holds no state between calls.
class RecipeRunner {
 public:
  virtual ~RecipeRunner() = default;
  /// One line for listings ("text recognition (CTC)").
  virtual std::string summary() const = 0;
  /// Checks the whole recipe before any work starts.
  /// \throws ValueError naming the file, line and key of the first problem.
  virtual void check(const Recipe& recipe, const config::ValidateOptions& options) const = 0;
  virtual FitResult train(const Recipe& recipe, const TrainRequest& request) const = 0;
  /// The metrics of the trained model on the recipe's evaluation data ("samples": how many).
  virtual std::map<std::string, double> evaluate(const Recipe& recipe) const = 0;
  /// One line per input: the input, a tab, the result.
  virtual std::vector<std::string> predict(const Recipe& recipe, const PredictRequest& request) const = 0;
  /// Where export() writes when `skiff export` is given no --output.
  virtual std::filesystem::path default_export_dir(const Recipe& recipe) const = 0;
  virtual ExportResult export_model(const Recipe& recipe, const std::filesystem::path& dir) const = 0;
  /// The run's output directory and its key: skiff launch points every rank but 0 at a
  /// scratch directory through it. Default: Global.save_model_dir (PaddleOCR's layout),
  /// ./output when unset.
  virtual RunOutput run_output(const Recipe& recipe) const;
};

/// Every registered runner, by task.
Registry<std::shared_ptr<const RecipeRunner>>& recipe_runners();

/// A recipe and the runner of its task.
struct LoadedRecipe {
  Recipe recipe;
  std::shared_ptr<const RecipeRunner> runner;
};

/// Reads `path` with its bases and `overrides`, finds the runner of its task
/// and checks the recipe with it.
/// \throws IoError / ValueError naming the file (and the known tasks when its
/// task has no runner).
LoadedRecipe load_recipe(const std::string& path, const std::vector<std::string>& overrides = {},
                         const config::ValidateOptions& options = {});

/// The checkpoint a TrainRequest resumes from in a run writing to `run_dir`:
/// request.resume, or with resume_latest the newest in `run_dir`/checkpoints.
/// \throws IoError when resume_latest finds none.
std::optional<std::filesystem::path> resume_checkpoint(const TrainRequest& request,
                                                       const std::filesystem::path& run_dir);

namespace detail {
struct RecipeRunnerRegistrar {
  RecipeRunnerRegistrar(const std::string& task, std::shared_ptr<const RecipeRunner> runner) {
    recipe_runners().add(task, std::move(runner));
  }
};
}  // namespace detail

}  // namespace skiff::train

#define SKIFF_RECIPE_RUNNER_CONCAT2(a, b) a##b
#define SKIFF_RECIPE_RUNNER_CONCAT(a, b) SKIFF_RECIPE_RUNNER_CONCAT2(a, b)
/// Registers `RunnerType` (default-constructible) as the runner of recipes whose task is `task`.
#define SKIFF_REGISTER_RECIPE_RUNNER(task, RunnerType)                                          \
  static const ::skiff::train::detail::RecipeRunnerRegistrar SKIFF_RECIPE_RUNNER_CONCAT(        \
      skiff_recipe_runner_, __COUNTER__)(task, std::make_shared<const RunnerType>())
