#pragma once
/// \file recipe.h
/// Science recipes: the YAML files under configs/science/. This is the PINN
/// recipe (optional `task: pinn`); operator recipes are in operator/operator_recipe.h.
///
///   Global:   {save_model_dir: output/plate_bending, seed: 0, print_batch_step: 100,
///              keep_last: 2, max_steps: 0}
///   problem:  {name: plate_bending, ...problem parameters}
///   sampling: {interior: 2000, boundary: 400, method: lhs}
///   model:    {hidden: [50, 50, 50, 50], activation: tanh, dtype: float32, derivatives: jet}
///   train:    {target_error: 0,
///              adam: {iterations: 1000, lr: 1.0e-3, gamma: 1.0, decay_steps: 1000},
///              lbfgs: {iterations: 1000, history: 50}}
///   eval:     {grid: [101, 151]}
///
/// `Global` holds the keys every suite's recipes share (framework/train/recipe.h):
/// the run's directory, the seed, how often to log and evaluate (every
/// print_batch_step Adam steps and L-BFGS iterations), checkpoints kept.
///
/// Everything but problem.name has a default. Unknown keys, wrong types and
/// out-of-range values are errors naming the file, line and key path, raised
/// before any training starts.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "suites/science/pinn.h"

namespace skiff::science {

struct ScienceRecipe {
  std::string file;
  YAML::Node root;  ///< the recipe after overrides (saved with the solution)
  std::shared_ptr<const Problem> problem;
  SamplingPlan sampling;
  uint64_t seed = 0;
  std::vector<int64_t> hidden{50, 50, 50, 50};
  Activation activation = Activation::Tanh;
  DType dtype = DType::Float32;
  DerivativeMode derivatives = DerivativeMode::Jet;
  TrainOptions train;
  std::vector<int64_t> eval_grid;
  std::string output_dir;   ///< Global.save_model_dir
  int keep_last = 2;        ///< Global.keep_last
  int64_t max_steps = 0;    ///< Global.max_steps

  /// A solver for this recipe (network initialized from `seed`).
  std::unique_ptr<PinnSolver> make_solver() const;
};

/// Parses and validates a recipe tree. `file` names it in errors.
ScienceRecipe parse_recipe(const YAML::Node& root, const std::string& file);

/// Reads a recipe file (with its `_BASE_` files, framework/config/config.h) and
/// applies "key.path=value" overrides in order.
/// \throws IoError for a missing/unreadable file, ValueError for YAML syntax
/// errors (with line), a non-map document or a malformed override.
YAML::Node read_recipe_yaml(const std::string& path, const std::vector<std::string>& overrides = {});

/// The recipe's top-level `task`: "pinn" (the default) or "operator".
/// \throws ValueError naming the file and line for another value.
std::string recipe_task(const YAML::Node& root, const std::string& file);

/// Reads `path`, applies "key.path=value" overrides in order, parses.
/// \throws IoError for a missing/unreadable file, ValueError for YAML syntax
/// errors (with line) and invalid settings.
ScienceRecipe load_recipe(const std::string& path, const std::vector<std::string>& overrides = {});

/// The recipe tree as YAML text.
std::string recipe_text(const YAML::Node& root);

/// Metadata keys of a saved science model (solution or operator): its format tag
/// and the recipe it was trained from, as YAML text.
inline constexpr const char* kModelFormatKey = "format";
inline constexpr const char* kModelRecipeKey = "recipe";

/// The recipe stored in a saved model's metadata.
/// \throws ValueError naming `path` and `kind` ("a skiff science solution") when the
/// format tag is not `format` or the recipe is missing or not valid YAML.
YAML::Node stored_recipe(const std::map<std::string, std::string>& metadata, const std::string& path,
                         const std::string& format, const std::string& kind);

}  // namespace skiff::science
