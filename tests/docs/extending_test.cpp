// docs/extending.md's example suite (tests/docs/example_suite/register.cpp) as a
// user would meet it: linked in, its `task: line_fit` recipes run through the same
// entry point as every suite's, and the docs quote exactly the code compiled here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/engine/predictor.h"
#include "framework/ops/ops.h"
#include "framework/train/recipe_runner.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path write_recipe(const fs::path& dir) {
  fs::create_directories(dir);
  std::ofstream(dir / "line.yml") << "task: line_fit\n"
                                     "Global: {epoch_num: 30, print_batch_step: 4, eval_batch_step: 4, save_model_dir: "
                                  << (dir / "run").string()
                                  << "}\n"
                                     "Data: {name: LinePoints, slope: 2.0, intercept: -1.0, points: 64}\n"
                                     "Optimizer: {name: Momentum, momentum: 0.9, lr: {name: Const, learning_rate: 0.1}}\n";
  return dir / "line.yml";
}

TEST(ExampleSuite, RunsThroughTheRecipeEntryPoint) {
  fs::path d = fs::temp_directory_path() / fmt::format("skiff_line_fit_{}", ::getpid());
  fs::remove_all(d);
  std::string recipe = write_recipe(d).string();

  train::LoadedRecipe r = train::load_recipe(recipe);
  EXPECT_EQ(train::recipe_task(r.recipe), "line_fit");
  train::FitResult fit = r.runner->train(r.recipe, {.quiet = true});
  EXPECT_EQ(fit.steps, 120);  // 30 epochs of 4 batches
  EXPECT_TRUE(fs::exists(d / "run/metrics.jsonl"));

  auto m = r.runner->evaluate(r.recipe);
  EXPECT_LT(m.at("mse"), 1e-4) << m.at("mse");
  EXPECT_EQ(m.at("samples"), 64);
  auto lines = r.runner->predict(r.recipe, {.inputs = {"0.5", "2"}});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NEAR(std::stod(lines[1].substr(lines[1].find('\t') + 1)), 3.0, 0.02) << lines[1];  // 2 * 2 - 1

  auto exported = r.runner->export_model(r.recipe, r.runner->default_export_dir(r.recipe));
  ASSERT_EQ(exported.files.size(), 1u);
  engine::Predictor onnx(exported.files[0].string());
  Tensor y = onnx.run(std::vector<Tensor>{from_vector(std::vector<float>{-1.0f, 0.0f, 1.0f}, Shape{3, 1})})[0];
  auto v = y.to_vector<double>();
  EXPECT_NEAR(v[0], -3.0, 0.02);
  EXPECT_NEAR(v[2], 1.0, 0.02);

  // --resume continues the run from its latest checkpoint.
  train::LoadedRecipe longer = train::load_recipe(recipe, {"Global.epoch_num=35"});
  EXPECT_EQ(longer.runner->train(longer.recipe, {.resume_latest = true, .quiet = true}).steps, 140);

  // The component's keys are checked like any suite's.
  try {
    train::load_recipe(recipe, {"Data.name=LinePoint"});
    ADD_FAILURE() << "a misspelt component loaded";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown line_fit data 'LinePoint'; did you mean 'LinePoints'?"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(d);
}

// The guide shows the example's code; it must be the code this test compiled.
TEST(ExampleSuite, TheGuideQuotesTheCompiledCode) {
  const fs::path root = SKIFF_SOURCE_DIR;
  std::string code = read_text(root / "tests/docs/example_suite/register.cpp");
  ASSERT_FALSE(code.empty());
  for (const char* doc : {"docs/extending.md", "docs/extending.zh.md"})
    EXPECT_NE(read_text(root / doc).find("```cpp\n" + code + "```"), std::string::npos)
        << doc << " does not quote tests/docs/example_suite/register.cpp as it is";
}

}  // namespace
}  // namespace skiff
