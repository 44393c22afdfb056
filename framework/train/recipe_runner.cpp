#include "framework/train/recipe_runner.h"

#include <fmt/format.h>

#include "framework/config/config.h"
#include "framework/core/error.h"

namespace skiff::train {

Registry<std::shared_ptr<const RecipeRunner>>& recipe_runners() {
  static Registry<std::shared_ptr<const RecipeRunner>> registry("recipe task");
  return registry;
}

std::string recipe_task(const Recipe& r) {
  config::Section top = r.top();
  if (top.has("task")) return top.text("task");
  config::Section architecture = top.section("Architecture");
  if (architecture.has("model_type")) return architecture.text("model_type");
  throw ValueError(fmt::format("{}: the recipe names no task: add a top-level 'task:' (known: {}), or "
                               "Architecture.model_type for PaddleOCR-style recipes",
                               r.file, fmt::join(recipe_runners().names(), ", ")));
}

LoadedRecipe load_recipe(const std::string& path, const std::vector<std::string>& overrides,
                         const config::ValidateOptions& options) {
  Recipe recipe{config::load_config(path, overrides), path};
  const std::string task = recipe_task(recipe);
  if (!recipe_runners().contains(task)) {
    config::Section top = recipe.top();
    std::string where = top.has("task") ? top.where("task") : top.section("Architecture").where("model_type");
    std::string hint = closest_match(task, recipe_runners().names());
    throw ValueError(fmt::format("{}: no suite runs task '{}'{} (known: {})", where, task,
                                 hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint),
                                 fmt::join(recipe_runners().names(), ", ")));
  }
  auto runner = recipe_runners().get(task);
  runner->check(recipe, options);
  return {std::move(recipe), std::move(runner)};
}

RunOutput RecipeRunner::run_output(const Recipe& recipe) const {
  return {recipe.top().section("Global").text("save_model_dir", "./output"), "Global.save_model_dir"};
}

std::optional<std::filesystem::path> resume_checkpoint(const TrainRequest& request,
                                                       const std::filesystem::path& run_dir) {
  if (request.resume) return request.resume;
  if (!request.resume_latest) return std::nullopt;
  auto latest = latest_checkpoint(run_dir);
  if (!latest) throw IoError(fmt::format("--resume: no checkpoint in {}/checkpoints", run_dir.string()));
  return latest;
}

}  // namespace skiff::train
