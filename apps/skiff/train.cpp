// `skiff train / eval / predict / export -c RECIPE [-o key.path=value ...]`: run a
// YAML recipe of any suite. The recipe names its task (a top-level `task:` or
// Architecture.model_type) and the suite that registered that task runs it
// (framework/train/recipe_runner.h); the recipe is checked before any work starts.
#include <fmt/format.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "apps/skiff/commands.h"
#include "framework/distributed/process_group.h"
#include "framework/train/recipe_runner.h"

namespace skiff::app {

namespace {

struct RecipeArgs {
  std::string file;
  std::vector<std::string> overrides;
  train::LoadedRecipe load() const { return train::load_recipe(file, overrides); }
};

void add_recipe_args(CLI::App* cmd, RecipeArgs& a) {
  cmd->add_option("-c,--config", a.file, "Recipe YAML file (configs/<suite>/...)")->required()->check(CLI::ExistingFile);
  // One value per -o, so inputs after it (skiff predict -c R -o k=v image.png) stay inputs.
  cmd->add_option("-o,--override", a.overrides,
                  "Override a value, key.path=value (the value is YAML), e.g. -o Global.epoch_num=5 (repeat -o for more)")
      ->allow_extra_args(false);
}

// The tasks recipes may name, for the commands' help.
std::string tasks_footer() {
  std::string out = "\nTasks (a recipe's top-level 'task:', or Architecture.model_type):";
  for (const auto& name : train::recipe_runners().names())
    out += fmt::format("\n  {:<10} {}", name, train::recipe_runners().get(name)->summary());
  return out;
}

}  // namespace

void add_train_commands(CLI::App& app) {
  // ---- train ----
  {
    struct Options {
      RecipeArgs recipe;
      std::string resume;
      bool quiet = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "train", "Train from a recipe: logs, checkpoints, best_model.safetensors, metrics.jsonl, TensorBoard events "
                 "and curves.png go to Global.save_model_dir; Ctrl-C saves a checkpoint");
    add_recipe_args(cmd, o->recipe);
    cmd->footer(tasks_footer());
    cmd->add_option("--resume", o->resume,
                    "Continue from a checkpoint file, or (with no value or 'auto') from the latest one in "
                    "Global.save_model_dir/checkpoints")
        ->expected(0, 1)
        ->default_str("auto");
    cmd->add_flag("-q,--quiet", o->quiet, "Print nothing but errors (train.log still gets everything)");
    cmd->callback([o, cmd] {
      train::LoadedRecipe r = o->recipe.load();
      train::TrainRequest request{.quiet = o->quiet};
      if (cmd->count("--resume")) {
        if (o->resume.empty() || o->resume == "auto") request.resume_latest = true;
        else request.resume = o->resume;
      }
      // A rank of skiff launch other than 0 trains like rank 0 but must not write the run's
      // directory: what the suite writes goes to a scratch directory of its own.
      std::filesystem::path scratch;
      if (distributed::world_rank() != 0) {
        const train::RunOutput out = r.runner->run_output(r.recipe);
        if (request.resume_latest) request.resume = train::resume_checkpoint(request, out.dir);
        request.resume_latest = false;
        scratch = std::filesystem::temp_directory_path() /
                  fmt::format("skiff-rank{}-{}", distributed::world_rank(), getpid());
        auto overrides = o->recipe.overrides;
        overrides.push_back(out.key + "=" + scratch.string());
        r = train::load_recipe(o->recipe.file, overrides);
      }
      train::FitResult res = r.runner->train(r.recipe, request);
      if (!scratch.empty()) std::filesystem::remove_all(scratch);
      if (res.interrupted) std::exit(kExitInterrupted);
    });
  }
  // ---- eval ----
  {
    struct Options {
      RecipeArgs recipe;
      bool json = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "eval", "Evaluate on the recipe's Eval set: the weights of Global.checkpoints, else "
                "<save_model_dir>/best_model.safetensors, else the pretrained model");
    add_recipe_args(cmd, o->recipe);
    cmd->footer(tasks_footer());
    cmd->add_flag("--json", o->json, "Print the metrics as one JSON object");
    cmd->callback([o] {
      train::LoadedRecipe r = o->recipe.load();
      auto m = r.runner->evaluate(r.recipe);
      if (o->json) {
        fmt::print("{}\n", nlohmann::json(m).dump());
        return;
      }
      for (auto& [k, v] : m) {
        // Errors of science models are small: keep their digits.
        std::string value = k == "samples" ? fmt::format("{}", int64_t(v))
                            : v != 0 && std::abs(v) < 0.01 ? fmt::format("{:.3e}", v)
                                                            : fmt::format("{:.4f}", v);
        fmt::print("{}: {}\n", k, value);
      }
    });
  }
  // ---- predict ----
  {
    struct Options {
      RecipeArgs recipe;
      std::vector<std::string> images;
      std::string save_path;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "predict", "Run the trained model on inputs and print one line per input: the input, a tab, the result. "
                   "rec prints image<TAB>text<TAB>score; det prints image<TAB>[{\"points\": [[x, y], ...], \"score\": "
                   "s}, ...] (PaddleOCR's det result format)");
    add_recipe_args(cmd, o->recipe);
    cmd->footer(tasks_footer());
    cmd->add_option("--image,images", o->images, "Inputs: for OCR tasks images (text lines for rec, pages for det; "
                                                  "default: Global.infer_img)");
    cmd->add_option("--save_path,--save-path", o->save_path,
                    "Detectors: also write <DIR>/det_res_<image name> with the boxes drawn");
    cmd->callback([o] {
      train::LoadedRecipe r = o->recipe.load();
      for (const auto& line : r.runner->predict(r.recipe, {.inputs = o->images, .save_dir = o->save_path}))
        fmt::print("{}\n", line);
    });
  }
  // ---- export ----
  {
    struct Options {
      RecipeArgs recipe;
      std::string output;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "export", "Write the trained model for deployment. OCR tasks write inference.onnx and inference.yml (the "
                  "input-size rule, normalization, dictionary or detection thresholds) for skiff ocr "
                  "--text_recognition_model_dir DIR / --text_detection_model_dir DIR");
    add_recipe_args(cmd, o->recipe);
    cmd->footer(tasks_footer());
    cmd->add_option("--output", o->output, "Output directory (default: Global.save_inference_dir, else "
                                           "<save_model_dir>/inference)");
    cmd->callback([o] {
      train::LoadedRecipe r = o->recipe.load();
      std::filesystem::path dir = o->output.empty() ? r.runner->default_export_dir(r.recipe) : std::filesystem::path(o->output);
      train::ExportResult res = r.runner->export_model(r.recipe, dir);
      std::vector<std::string> files;
      for (const auto& f : res.files) files.push_back(f.string());
      fmt::print(stderr, "exported {}{}\n", fmt::join(files, ", "),
                 res.max_abs_diff < 0 ? "" : fmt::format(" ({}: max abs diff {:.2e})", res.check, res.max_abs_diff));
      fmt::print("{}\n", dir.string());
    });
  }
}

}  // namespace skiff::app
