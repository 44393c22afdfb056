// `skiff train / eval / predict / export -c RECIPE [-o key.path=value ...]`: run a
// YAML training recipe (suites/ocr/train/recipe.h: text recognition or text
// detection, by Architecture.model_type). The recipe is validated before any work starts.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "apps/skiff/commands.h"
#include "framework/data/image_io.h"
#include "suites/ocr/draw_result.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/train/det_recipe.h"
#include "suites/ocr/train/rec_recipe.h"

namespace skiff::app {

namespace {

struct RecipeArgs {
  std::string file;
  std::vector<std::string> overrides;
};

void add_recipe_args(CLI::App* cmd, RecipeArgs& a) {
  cmd->add_option("-c,--config", a.file, "Recipe YAML file (configs/ocr/...)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--override", a.overrides,
                  "Override a value, key.path=value (the value is YAML), e.g. -o Global.epoch_num=5");
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
    cmd->add_option("--resume", o->resume,
                    "Continue from a checkpoint file, or (with no value or 'auto') from the latest one in "
                    "Global.save_model_dir/checkpoints")
        ->expected(0, 1)
        ->default_str("auto");
    cmd->add_flag("-q,--quiet", o->quiet, "Print nothing but errors (train.log still gets everything)");
    cmd->callback([o, cmd] {
      ocr::Recipe r = ocr::load_recipe(o->recipe.file, o->recipe.overrides);
      std::optional<std::filesystem::path> resume;
      if (cmd->count("--resume")) {
        if (o->resume.empty() || o->resume == "auto") {
          auto dir = r.section("Global").text("save_model_dir", "./output");
          resume = train::latest_checkpoint(dir);
          if (!resume) throw IoError(fmt::format("--resume: no checkpoint in {}/checkpoints", dir));
        } else {
          resume = o->resume;
        }
      }
      train::FitResult res = ocr::train_recipe(r, resume, o->quiet);
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
    cmd->add_flag("--json", o->json, "Print the metrics as one JSON object");
    cmd->callback([o] {
      auto m = ocr::evaluate_recipe(ocr::load_recipe(o->recipe.file, o->recipe.overrides));
      if (o->json) {
        fmt::print("{}\n", nlohmann::json(m).dump());
        return;
      }
      for (auto& [k, v] : m) fmt::print("{}: {}\n", k, k == "samples" ? fmt::format("{}", int64_t(v)) : fmt::format("{:.4f}", v));
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
        "predict", "Run the trained model on images. Recognizers print image<TAB>text<TAB>score; detectors print "
                   "image<TAB>[{\"points\": [[x, y], ...], \"score\": s}, ...] (PaddleOCR's det result format)");
    add_recipe_args(cmd, o->recipe);
    cmd->add_option("--image,images", o->images, "Images: text lines for recognizers, pages for detectors "
                                                  "(default: Global.infer_img)");
    cmd->add_option("--save_path,--save-path", o->save_path,
                    "Detectors: also write <DIR>/det_res_<image name> with the boxes drawn");
    cmd->callback([o] {
      ocr::Recipe r = ocr::load_recipe(o->recipe.file, o->recipe.overrides);
      auto images = o->images;
      if (images.empty()) images.push_back(r.section("Global").text("infer_img"));
      if (r.model_type() == "det") {
        for (const auto& p : ocr::predict_detector(r, images)) {
          nlohmann::json boxes = nlohmann::json::array();
          for (const auto& b : p.boxes) {
            nlohmann::json points = nlohmann::json::array();
            for (const auto& q : b.quad.pts) points.push_back({int(q.x), int(q.y)});
            boxes.push_back({{"points", points}, {"score", std::round(b.score * 1e4) / 1e4}});
          }
          fmt::print("{}\t{}\n", p.image, boxes.dump());
          if (!o->save_path.empty()) {
            std::vector<std::array<cv::Point2f, 4>> quads;
            for (const auto& b : p.boxes) quads.push_back(b.quad.pts);
            std::filesystem::create_directories(o->save_path);
            auto out = std::filesystem::path(o->save_path) / ("det_res_" + std::filesystem::path(p.image).filename().string());
            data::write_image_file(out.string(), ocr::draw_det_result(ocr::read_image(p.image), quads));
            fmt::print(stderr, "wrote {}\n", out.string());
          }
        }
        return;
      }
      if (!o->save_path.empty()) throw ValueError("predict: --save_path draws detection boxes; this is a recognition recipe");
      for (const auto& p : ocr::predict_recognizer(r, images)) fmt::print("{}\t{}\t{:.4f}\n", p.image, p.text, p.score);
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
        "export", "Write inference.onnx and inference.yml (the input-size rule, normalization, dictionary or "
                  "detection thresholds) for skiff ocr --text_recognition_model_dir DIR / --text_detection_model_dir DIR");
    add_recipe_args(cmd, o->recipe);
    cmd->add_option("--output", o->output, "Output directory (default: Global.save_inference_dir, else "
                                           "<save_model_dir>/inference)");
    cmd->callback([o] {
      ocr::Recipe r = ocr::load_recipe(o->recipe.file, o->recipe.overrides);
      auto g = r.section("Global");
      std::filesystem::path dir = !o->output.empty()                 ? std::filesystem::path(o->output)
                                  : g.has("save_inference_dir") ? std::filesystem::path(g.text("save_inference_dir"))
                                  : std::filesystem::path(g.text("save_model_dir", "./output")) / "inference";
      double diff = ocr::export_recipe(r, dir);
      fmt::print(stderr, "exported {} and {} (ONNX vs eager: max abs diff {:.2e})\n", (dir / "inference.onnx").string(),
                 (dir / "inference.yml").string(), diff);
      fmt::print("{}\n", dir.string());
    });
  }
}

}  // namespace skiff::app
