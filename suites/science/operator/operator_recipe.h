#pragma once
/// \file operator_recipe.h
/// Neural-operator recipes: YAML files under configs/science/ with
/// `task: operator` at the top (PINN recipes have no task, or `task: pinn`).
///
///   task:   operator
///   Global: {save_model_dir: output/fno_burgers, seed: 0, epoch_num: 100, print_batch_step: 10,
///            keep_last: 2, max_steps: 0}
///   data:   {equation: burgers, nu: 0.01, t_end: 1.0, train_samples: 1000, test_samples: 200,
///            grid: 256, solver_grid: 512, dt: 5.0e-4, seed: 0,
///            initial_condition: {sigma: 25, tau: 5, alpha: 2}}
///   model:  {modes: 16, width: 64, layers: 4, projection: 128}
///   train:  {batch_size: 20, lr: 1.0e-3, weight_decay: 1.0e-4, step_size: 25, gamma: 0.5}
///
/// Every key has a default. As for PINN recipes, unknown keys, wrong types and
/// out-of-range values are errors naming the file, line and key path.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "suites/science/operator/burgers_solver.h"
#include "suites/science/operator/fno.h"

namespace skiff::science {

struct OperatorRecipe {
  std::string file;
  YAML::Node root;  ///< after overrides (saved with the model)

  BurgersSolverOptions solver;
  RandomFieldOptions initial_condition;
  int64_t train_samples = 1000, test_samples = 200;
  int64_t grid = 256, solver_grid = 512;
  uint64_t data_seed = 0;

  FnoConfig model;

  int64_t epochs = 100, batch_size = 20;  ///< Global.epoch_num, train.batch_size
  double lr = 1e-3, weight_decay = 1e-4;
  int64_t step_size = 25;  ///< the learning rate is multiplied by gamma every step_size epochs
  double gamma = 0.5;

  std::string output_dir = "output/fno_burgers";  ///< Global.save_model_dir
  int64_t log_every = 10;                         ///< Global.print_batch_step
  int keep_last = 2;                              ///< Global.keep_last
  int64_t max_steps = 0;                          ///< Global.max_steps (0: every epoch)
};

/// \throws ValueError naming file, line and key for invalid settings.
OperatorRecipe parse_operator_recipe(const YAML::Node& root, const std::string& file);

}  // namespace skiff::science
