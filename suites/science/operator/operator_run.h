#pragma once
/// \file operator_run.h
/// Making the data, training, evaluating and saving a neural operator from an
/// OperatorRecipe (what `skiff sci train/eval` run for `task: operator`).
///
/// The loss and the reported error are the FNO paper's: the relative L2 error
/// ||prediction - target|| / ||target|| per sample, averaged over samples.
/// Training data and held-out test data come from the solver with different
/// seeds, so no test initial condition is ever seen in training.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "framework/train/trainer.h"
#include "suites/science/operator/operator_recipe.h"

namespace skiff::science {

enum class DataSplit { Train, Test };

/// The recipe's train or test set on `grid` points (0: the recipe's grid).
OperatorDataset make_operator_data(const OperatorRecipe& r, DataSplit split, int64_t grid = 0);

struct OperatorEvaluation {
  int64_t samples = 0, grid = 0;
  double mean_rel_l2 = 0, median_rel_l2 = 0, max_rel_l2 = 0;
  std::vector<double> per_sample;
};

/// Relative L2 error of every sample (evaluated in chunks, without a graph).
OperatorEvaluation evaluate_operator(Fno1d& model, const OperatorDataset& data);

/// Where an operator run writes and how it reports.
struct OperatorRunOptions {
  std::filesystem::path output_dir;
  bool quiet = false;
  /// Stored in every checkpoint and weights file (e.g. the recipe).
  std::map<std::string, std::string> metadata{};
};

/// Trains `model` on the framework's Trainer: Adam (coupled weight decay), the
/// learning rate times gamma every step_size epochs, seeded shuffled batches,
/// the held-out error after every epoch (best_model.safetensors keeps the
/// lowest), checkpoints with exact resume (`resume_from`), metrics.jsonl,
/// TensorBoard and curves.png in run.output_dir.
/// \throws Error when the loss becomes non-finite (names the step).
train::FitResult fit_operator(Fno1d& model, const OperatorRecipe& r, const OperatorDataset& train,
                              const OperatorDataset& test, const OperatorRunOptions& run,
                              const std::optional<std::filesystem::path>& resume_from = std::nullopt);

/// The model's weights with the recipe (YAML text) in the metadata.
void save_operator(const std::string& path, Fno1d& model, const OperatorRecipe& r);
struct OperatorModel {
  OperatorRecipe recipe;
  std::shared_ptr<Fno1d> model;
};
/// \throws IoError / ValueError naming `path` for a missing file, a file that
/// is not a skiff operator model, or weights that do not fit the stored recipe.
OperatorModel load_operator(const std::string& path);
/// Whether a safetensors file was written by save_operator (reads only its header).
bool is_operator_file(const std::string& path);

nlohmann::json operator_evaluation_json(const OperatorEvaluation& e);

/// dir/samples.png: `count` test samples, each with its initial condition,
/// the solver's u(., T) and the operator's prediction. Returns the files written.
std::vector<std::string> write_operator_images(const std::string& dir, Fno1d& model, const OperatorRecipe& r,
                                               const OperatorDataset& test, int64_t count = 4);

}  // namespace skiff::science
