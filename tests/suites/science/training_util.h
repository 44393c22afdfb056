#pragma once
// Training a recipe's PINN in a scratch directory, for the science tests.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "framework/ops/ops.h"
#include "suites/science/pinn_training.h"
#include "suites/science/recipe.h"

namespace skiff::science::test {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "skiff-science-test-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline double loss_of(PinnSolver& s) { return to(detach(s.loss()), DType::Float64).item<double>(); }

struct ShortRun {
  double loss_before = 0, loss_after = 0;
  train::FitResult fit;
};

// Trains `solver` as the recipe says, writing the run's records to a scratch directory.
inline ShortRun train_quietly(PinnSolver& solver, const ScienceRecipe& r) {
  TempDir dir;
  ShortRun run;
  run.loss_before = loss_of(solver);
  run.fit = fit_pinn(solver, r.train, {.output_dir = dir.path, .quiet = true});
  run.loss_after = loss_of(solver);
  return run;
}

}  // namespace skiff::science::test
