#pragma once
/// \file operator_run.h
/// Making the data, training, evaluating and saving a neural operator from an
/// OperatorRecipe (what `skiff sci train/eval` run for `task: operator`).
///
/// The loss and the reported error are the FNO paper's: the relative L2 error
/// ||prediction - target|| / ||target|| per sample, averaged over samples.
/// Training data and held-out test data come from the solver with different
/// seeds, so no test initial condition is ever seen in training.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/science/operator/operator_recipe.h"

namespace skiff::science {

enum class DataSplit { Train, Test };

/// The recipe's train or test set on `grid` points (0: the recipe's grid).
OperatorDataset make_operator_data(const OperatorRecipe& r, DataSplit split, int64_t grid = 0);

struct OperatorEpoch {
  int64_t epoch = 0;
  double train_loss = 0;  ///< mean relative L2 over the epoch's batches
  double test_error = 0;  ///< mean relative L2 on the test set after the epoch
  double lr = 0;
  double seconds = 0;     ///< since training started
};

struct OperatorEvaluation {
  int64_t samples = 0, grid = 0;
  double mean_rel_l2 = 0, median_rel_l2 = 0, max_rel_l2 = 0;
  std::vector<double> per_sample;
};

/// Relative L2 error of every sample (evaluated in chunks, without a graph).
OperatorEvaluation evaluate_operator(Fno1d& model, const OperatorDataset& data);

/// Adam (coupled weight decay) with a step schedule over seeded shuffled
/// batches; `on_epoch` sees every epoch's record.
/// \throws Error when the loss becomes non-finite (names the epoch).
std::vector<OperatorEpoch> train_operator(Fno1d& model, const OperatorRecipe& r, const OperatorDataset& train,
                                          const OperatorDataset& test,
                                          const std::function<void(const OperatorEpoch&)>& on_epoch = {});

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
nlohmann::json operator_log_json(const std::vector<OperatorEpoch>& log);

/// dir/samples.png: `count` test samples, each with its initial condition,
/// the solver's u(., T) and the operator's prediction. Returns the files written.
std::vector<std::string> write_operator_images(const std::string& dir, Fno1d& model, const OperatorRecipe& r,
                                               const OperatorDataset& test, int64_t count = 4);

}  // namespace skiff::science
