// The seam every suite plugs into, checked over all suites linked into skiff:
// every recipe component that validates has a constructor, every component kind
// a schema names is registered, every shipped recipe finds its runner and
// passes its checks, and every suite command hangs where it says.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <vector>

#include "framework/cli/command_registry.h"
#include "framework/config/schema.h"
#include "framework/train/recipe_runner.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;

// The whole recipes under configs/ (data/ holds dictionaries; _base_/ holds the parts
// detection recipes include).
std::vector<fs::path> shipped_recipes() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SKIFF_SOURCE_DIR) / "configs")) {
    const auto dir = e.path().parent_path().filename();
    if (e.path().extension() == ".yml" && dir != "data" && dir != "_base_") out.push_back(e.path());
  }
  return out;
}

// Every Component(s)-typed key of `schema`, nested maps included.
void component_keys(const config::Schema& schema, const std::string& path,
                    const std::function<void(const config::Key&, const std::string&)>& each) {
  for (const auto& k : schema.keys) {
    if (k.type == config::Type::Component || k.type == config::Type::Components) each(k, path + k.name);
    if (k.schema) component_keys(*k.schema, path + k.name + ".", each);
  }
}

TEST(SuiteRegistry, EveryRegisteredComponentHasAConstructor) {
  const auto& table = config::Components::global();
  ASSERT_FALSE(table.kinds().empty());
  int checked = 0;
  for (const auto& kind : table.kinds())
    for (const auto& name : table.names(kind)) {
      const config::ComponentInfo* info = table.find(kind, name);
      ASSERT_NE(info->factory, nullptr) << kind << " " << name;
      EXPECT_EQ(info->factory->kind(), kind);
      EXPECT_TRUE(info->factory->can_make(name)) << kind << " '" << name << "' validates but has no constructor";
      ++checked;
    }
  std::printf("%d components in %zu kinds\n", checked, table.kinds().size());
}

// A key naming a kind nobody registers would reject every recipe that uses it.
TEST(SuiteRegistry, EveryKindASchemaNamesIsRegistered) {
  const auto& table = config::Components::global();
  auto kinds = table.kinds();
  for (const auto& kind : kinds)
    for (const auto& name : table.names(kind))
      component_keys(table.find(kind, name)->schema, kind + " " + name + ": ",
                     [&](const config::Key& key, const std::string& where) {
                       EXPECT_FALSE(table.names(key.kind).empty())
                           << where << " names the component kind '" << key.kind << "', which has no component";
                     });
}

TEST(SuiteRegistry, EveryShippedRecipeFindsItsRunnerAndPassesItsChecks) {
  int recipes = 0;
  for (const fs::path& path : shipped_recipes()) {
    SCOPED_TRACE(path.string());
    try {
      train::LoadedRecipe r = train::load_recipe(path.string(), {}, {.check_files = false});
      EXPECT_NE(r.runner, nullptr);
      EXPECT_TRUE(train::recipe_runners().contains(train::recipe_task(r.recipe)));
      ++recipes;
    } catch (const Error& err) {
      ADD_FAILURE() << err.what();
    }
  }
  EXPECT_GE(recipes, 10);
}

// skiff launch gives every rank but 0 its own output directory through the key a runner
// names: for every shipped recipe, setting that key must move the run's output.
TEST(SuiteRegistry, EveryRunnerNamesTheKeyOfItsOutputDirectory) {
  int recipes = 0;
  for (const fs::path& path : shipped_recipes()) {
    SCOPED_TRACE(path.string());
    try {
      train::LoadedRecipe r = train::load_recipe(path.string(), {}, {.check_files = false});
      const train::RunOutput out = r.runner->run_output(r.recipe);
      EXPECT_FALSE(out.dir.empty());
      train::LoadedRecipe moved =
          train::load_recipe(path.string(), {out.key + "=/tmp/skiff-rank-test"}, {.check_files = false});
      EXPECT_EQ(moved.runner->run_output(moved.recipe).dir, fs::path("/tmp/skiff-rank-test")) << out.key;
      ++recipes;
    } catch (const Error& err) {
      ADD_FAILURE() << err.what();
    }
  }
  EXPECT_GE(recipes, 10);
}

TEST(SuiteRegistry, SuiteCommandsHangUnderTheirParents) {
  CLI::App app{"skiff"};
  app.add_subcommand("bench", "core command the suites add to");
  cli::add_registered_commands(app);
  for (const auto& path : cli::commands().names()) {
    SCOPED_TRACE(path);
    CLI::App* at = &app;
    std::istringstream words(path);
    for (std::string w; words >> w;) ASSERT_NO_THROW(at = at->get_subcommand(w));
  }
  for (const char* expected : {"ocr", "sci", "bench ocr", "bench pinn"})
    EXPECT_TRUE(cli::commands().contains(expected)) << expected;
}

}  // namespace
}  // namespace skiff
