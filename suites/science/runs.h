#pragma once
/// \file runs.h
/// The science suite's work as the commands run it: train a recipe (PINN or
/// neural operator) and write its outputs, evaluate a saved model, read a
/// solution at points. `skiff sci ...` (suites/science/cli) and the pinn /
/// operator recipe runners (`skiff train | eval | predict -c`) both call these.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "framework/train/trainer.h"
#include "suites/science/operator/operator_recipe.h"
#include "suites/science/recipe.h"

namespace skiff::science {

/// Trains a PINN recipe (pinn_training.h) into `output` (empty: the recipe's
/// Global.save_model_dir): the Trainer's records and checkpoints, then
/// metrics.json, solution.safetensors and the field images; prints the
/// evaluation. Progress goes to stderr unless `quiet`. `resume_from`: a
/// checkpoint of the run to continue. After Ctrl-C it returns with only the
/// checkpoint written (FitResult::interrupted).
train::FitResult train_pinn_recipe(const ScienceRecipe& recipe, std::string output, bool quiet,
                                   const std::optional<std::filesystem::path>& resume_from = std::nullopt);

/// Trains a neural-operator recipe into `output` (empty: the recipe's
/// Global.save_model_dir): the Trainer's records and checkpoints, then
/// metrics.json, model.safetensors and samples.png. `resume_from` as for PINNs.
train::FitResult train_operator_recipe(const OperatorRecipe& recipe, std::string output, bool quiet,
                                       const std::optional<std::filesystem::path>& resume_from = std::nullopt);

/// A saved model (solution.safetensors or model.safetensors) evaluated again.
struct SavedModelEvaluation {
  std::string title;                       ///< "plate_bending from FILE on a 101x151 grid"
  std::vector<std::string> lines;          ///< the human-readable report, one line each
  nlohmann::json json;                     ///< the same as JSON
  std::map<std::string, double> metrics;   ///< "w rel_l2", "w max_abs", figures...
};

/// `grid_text`: "201,301" (PINN) or "512" (operator); empty: the recipe's.
/// `output`: also write metrics.json and pictures there (empty: nothing written).
/// \throws IoError / ValueError naming the file or the bad --grid.
SavedModelEvaluation evaluate_saved_model(const std::string& model, const std::string& grid_text,
                                          const std::string& output);

/// CSV (header, then one row per point) of a solution's fields at `points`
/// ("x,y" each, physical units) or on a regular grid ("11,16").
/// \throws ValueError naming the bad point or a model that is not a PINN solution.
std::string query_solution(const std::string& model, const std::vector<std::string>& points,
                           const std::string& grid_text);

}  // namespace skiff::science
