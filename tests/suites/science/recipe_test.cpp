#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "suites/science/operator/operator_recipe.h"
#include "suites/science/recipe.h"
#include "framework/config/section.h"

using namespace skiff;
using namespace skiff::science;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_recipe(YAML::Load(yaml), "r.yml");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Recipe, DefaultsAndValues) {
  auto r = parse_recipe(YAML::Load(R"(
problem: {name: plate_bending, plate: {a: 1.5}}
sampling: {interior: 300, method: uniform}
model: {hidden: [8, 8], dtype: float64, derivatives: autograd}
train: {adam: {iterations: 7, lr: 0.01}, lbfgs: {iterations: 3}}
eval: {grid: [5, 6]}
Global: {seed: 4, print_batch_step: 5, keep_last: 3}
)"),
                        "r.yml");
  EXPECT_EQ(r.problem->name(), "plate_bending");
  EXPECT_EQ(r.sampling.count("interior"), 300);
  EXPECT_EQ(r.sampling.count("boundary"), 400);  // the problem's default
  EXPECT_EQ(r.sampling.method, Sampling::Uniform);
  EXPECT_EQ(r.hidden, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(r.dtype, DType::Float64);
  EXPECT_EQ(r.derivatives, DerivativeMode::Autograd);
  EXPECT_EQ(r.seed, 4u);
  EXPECT_EQ(r.train.adam_iterations, 7);
  EXPECT_DOUBLE_EQ(r.train.adam_lr, 0.01);
  EXPECT_EQ(r.train.lbfgs_iterations, 3);
  EXPECT_EQ(r.eval_grid, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(r.output_dir, "output/plate_bending");
  EXPECT_EQ(r.train.log_every, 5);
  EXPECT_EQ(r.keep_last, 3);
  EXPECT_DOUBLE_EQ(r.problem->domain()->bounds().hi[0], 1.5);
}

TEST(Recipe, ErrorsNameFileLineAndKey) {
  // Keys of the layout before Global say where they went.
  std::string moved = error_of("problem: {name: plate_bending}\noutput: {dir: out}\n");
  EXPECT_NE(moved.find("r.yml:2: output: output.dir moved to Global.save_model_dir"), std::string::npos) << moved;
  moved = error_of("problem: {name: plate_bending}\ntrain:\n  log_every: 5\n");
  EXPECT_NE(moved.find("r.yml:3: train.log_every: train.log_every moved to Global.print_batch_step"),
            std::string::npos)
      << moved;
  moved = error_of("problem: {name: plate_bending}\nGlobal: {epoch_num: 3}\n");
  EXPECT_NE(moved.find("Global.epoch_num: unknown key"), std::string::npos) << moved;
  std::string e = error_of("problem: {name: plate_bending}\nmodel:\n  hiden: [3]\n");
  EXPECT_NE(e.find("r.yml:3: model.hiden: unknown key; did you mean 'hidden'?"), std::string::npos) << e;
  e = error_of("problem:\n  name: plate_bending\n  plate: {thicknes: 0.1}\n");
  EXPECT_NE(e.find("problem.plate.thicknes"), std::string::npos) << e;
  EXPECT_NE(e.find("'thickness'"), std::string::npos) << e;
  e = error_of("problem: {name: plate_bendin}\n");
  EXPECT_NE(e.find("did you mean 'plate_bending'"), std::string::npos) << e;
  e = error_of("problem: {name: poisson}\ntrain: {adam: {lr: -1}}\n");
  EXPECT_NE(e.find("train.adam.lr: must be > 0"), std::string::npos) << e;
  e = error_of("problem: {name: poisson}\nsampling: {interior: many}\n");
  EXPECT_NE(e.find("sampling.interior: expected an integer, got 'many'"), std::string::npos) << e;
  e = error_of("problem: {name: poisson}\nmodel: {activation: relu}\n");
  EXPECT_NE(e.find("model.activation"), std::string::npos) << e;
  e = error_of("problem: {name: poisson}\neval: {grid: [10]}\n");
  EXPECT_NE(e.find("eval.grid: needs 2 sizes"), std::string::npos) << e;
  e = error_of("sampling: {}\n");
  EXPECT_NE(e.find("missing the 'problem' section"), std::string::npos) << e;
  e = error_of("problem: {name: plate_bending, plate: {poisson_ratio: 0.7}}\n");
  EXPECT_NE(e.find("poisson_ratio: must lie in (-1, 0.5)"), std::string::npos) << e;
}

TEST(Recipe, OverridesParseValuesAsYaml) {
  YAML::Node root = YAML::Load("problem: {name: poisson}\nmodel: {hidden: [4]}\n");
  config::apply_override(root, "model.hidden=[6, 7]");
  config::apply_override(root, "train.adam.iterations=12");
  config::apply_override(root, "problem.solution.ky=2");
  auto r = parse_recipe(root, "r.yml");
  EXPECT_EQ(r.hidden, (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(r.train.adam_iterations, 12);
  EXPECT_THROW(config::apply_override(root, "novalue"), ValueError);
  EXPECT_THROW(config::apply_override(root, "model.hidden.x=1"), ValueError);  // through a list
}

TEST(Recipe, LoadReportsMissingFilesAndSyntax) {
  EXPECT_THROW(load_recipe("/nonexistent/recipe.yml"), Error);
  auto path = std::filesystem::temp_directory_path() / "skiff_bad_recipe.yml";
  std::ofstream(path) << "problem: {name: poisson\n";
  try {
    load_recipe(path.string());
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("YAML syntax error"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

// Every recipe shipped in configs/science loads and validates.
TEST(Recipe, ShippedRecipesAreValid) {
  int n = 0;
  for (const auto& f : std::filesystem::directory_iterator(SKIFF_SOURCE_DIR "/configs/science")) {
    if (f.path().extension() != ".yml") continue;
    const std::string path = f.path().string();
    YAML::Node root = read_recipe_yaml(path);
    if (recipe_task(root, path) == "operator")
      EXPECT_NO_THROW(parse_operator_recipe(root, path)) << path;
    else
      EXPECT_NO_THROW(parse_recipe(root, path)) << path;
    ++n;
  }
  EXPECT_GE(n, 7);
}
