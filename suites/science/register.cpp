// What the science suite adds to skiff: the runners of its recipes, `task: pinn`
// (physics-informed networks) and `task: operator` (neural operators), behind
// `skiff train | eval | predict -c RECIPE`. `skiff sci ...` (cli/) runs the same code.
#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "framework/core/error.h"
#include "framework/train/recipe_runner.h"
#include "suites/science/operator/operator_recipe.h"
#include "suites/science/recipe.h"
#include "suites/science/runs.h"

namespace skiff::science {
namespace {

namespace fs = std::filesystem;

// What the two science runners share: the model a run leaves and no ONNX export yet.
class ScienceRunner : public train::RecipeRunner {
 public:
  fs::path default_export_dir(const train::Recipe& r) const override { return output_dir(r) / "inference"; }
  train::ExportResult export_model(const train::Recipe& r, const fs::path&) const override {
    throw NotImplementedError(fmt::format("{}: science models have no ONNX export yet; the trained model is {}", r.file,
                                          model_file(r).string()));
  }
  std::map<std::string, double> evaluate(const train::Recipe& r) const override {
    return evaluate_saved_model(trained_model(r).string(), "", "").metrics;
  }

 protected:
  virtual fs::path output_dir(const train::Recipe& r) const = 0;
  virtual fs::path model_file(const train::Recipe& r) const = 0;
  // The model a finished `skiff train` left, or an error saying how to make it.
  fs::path trained_model(const train::Recipe& r) const {
    fs::path model = model_file(r);
    if (!fs::exists(model))
      throw IoError(fmt::format("{}: no trained model at {}; train first (skiff train -c {})", r.file, model.string(),
                                r.file));
    return model;
  }
};

class PinnRunner final : public ScienceRunner {
 public:
  std::string summary() const override { return "physics-informed network (science), configs/science/*.yml"; }
  void check(const train::Recipe& r, const config::ValidateOptions&) const override { parse_recipe(r.root, r.file); }
  train::FitResult train(const train::Recipe& r, const train::TrainRequest& request) const override {
    ScienceRecipe recipe = parse_recipe(r.root, r.file);
    return train_pinn_recipe(recipe, "", request.quiet, train::resume_checkpoint(request, recipe.output_dir));
  }
  // Each input is a point "x,y" in physical units; the result is every field there.
  std::vector<std::string> predict(const train::Recipe& r, const train::PredictRequest& request) const override {
    if (request.inputs.empty())
      throw ValueError(fmt::format("{}: give the points to predict at, e.g. skiff predict -c {} 1,1.5 0.5,0.5", r.file,
                                   r.file));
    const size_t dims = parse_recipe(r.root, r.file).problem->inputs().size();
    // query_solution's CSV: a header, then per point its coordinates and each field.
    std::istringstream csv(query_solution(trained_model(r).string(), request.inputs, ""));
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(csv, line);) {
      rows.emplace_back();
      std::istringstream cells(line);
      for (std::string cell; std::getline(cells, cell, ',');) rows.back().push_back(cell);
    }
    std::vector<std::string> lines;
    for (size_t i = 0; i < request.inputs.size(); ++i) {
      std::string result;
      for (size_t c = dims; c < rows[0].size(); ++c)
        result += fmt::format("{}{}={}", c == dims ? "" : " ", rows[0][c], rows[i + 1][c]);
      lines.push_back(fmt::format("{}\t{}", request.inputs[i], result));
    }
    return lines;
  }

 protected:
  fs::path output_dir(const train::Recipe& r) const override { return parse_recipe(r.root, r.file).output_dir; }
  fs::path model_file(const train::Recipe& r) const override { return output_dir(r) / "solution.safetensors"; }
};

class OperatorRunner final : public ScienceRunner {
 public:
  std::string summary() const override { return "neural operator (science), configs/science/fno_burgers.yml"; }
  void check(const train::Recipe& r, const config::ValidateOptions&) const override {
    parse_operator_recipe(r.root, r.file);
  }
  train::FitResult train(const train::Recipe& r, const train::TrainRequest& request) const override {
    OperatorRecipe recipe = parse_operator_recipe(r.root, r.file);
    return train_operator_recipe(recipe, "", request.quiet, train::resume_checkpoint(request, recipe.output_dir));
  }
  std::vector<std::string> predict(const train::Recipe& r, const train::PredictRequest&) const override {
    throw NotImplementedError(fmt::format("{}: a neural operator maps whole initial conditions, not files; use skiff "
                                          "eval -c {} for its error on the held-out set",
                                          r.file, r.file));
  }

 protected:
  fs::path output_dir(const train::Recipe& r) const override { return parse_operator_recipe(r.root, r.file).output_dir; }
  fs::path model_file(const train::Recipe& r) const override { return output_dir(r) / "model.safetensors"; }
};

}  // namespace
}  // namespace skiff::science

SKIFF_REGISTER_RECIPE_RUNNER("pinn", skiff::science::PinnRunner);
SKIFF_REGISTER_RECIPE_RUNNER("operator", skiff::science::OperatorRunner);
