#pragma once
/// \file report.h
/// What a science run leaves on disk: the solution (safetensors), metrics
/// (JSON) and pictures of every field (PNG), each written atomically.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/science/recipe.h"

namespace skiff::science {

/// A trained solution: the recipe it came from and its solver with the weights.
struct Solution {
  ScienceRecipe recipe;
  std::unique_ptr<PinnSolver> solver;
};

/// Writes the network's weights with the recipe (YAML text) in the metadata,
/// so the file alone is enough to rebuild the problem and the network.
void save_solution(const std::string& path, PinnSolver& solver, const ScienceRecipe& recipe);
/// \throws IoError / ValueError naming `path` for a missing file, a file that
/// is not a skiff science solution, or weights that do not fit the recipe.
Solution load_solution(const std::string& path);

/// Evaluation as JSON: per-field relative L2 and max errors, figures.
nlohmann::json evaluation_json(const Evaluation& e);

/// For 2-D problems: one PNG per field at dir/<field>.png with three panels
/// (prediction, reference, |error|), each with its colour bar; without a
/// reference only the prediction. Time-dependent problems in one space
/// dimension also get dir/<field>_snapshots.png: the field along x at four
/// times, prediction over reference. Returns the files written.
std::vector<std::string> write_field_images(const std::string& dir, PinnSolver& solver,
                                            const std::vector<int64_t>& grid);

/// Writes JSON text atomically (pretty-printed, newline-terminated).
void write_json(const std::string& path, const nlohmann::json& j);

}  // namespace skiff::science
