#include "suites/ocr/train/recipe.h"

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/train/recipe.h"
#include "framework/zoo/zoo.h"

namespace skiff::ocr {

namespace fs = std::filesystem;
using config::Key;
using config::Schema;
using config::Type;

fs::path OcrRecipeRunner::default_export_dir(const Recipe& r) const {
  config::Section g = r.section("Global");
  if (g.has("save_inference_dir")) return g.text("save_inference_dir");
  return fs::path(g.text("save_model_dir", "./output")) / "inference";
}

std::optional<fs::path> OcrRecipeRunner::resume_from(const Recipe& r, const train::TrainRequest& request) {
  return train::resume_checkpoint(request, r.section("Global").text("save_model_dir", "./output"));
}

std::vector<std::string> OcrRecipeRunner::predict_inputs(const Recipe& r, const train::PredictRequest& request) {
  if (!request.inputs.empty()) return request.inputs;
  config::Section g = r.section("Global");
  if (!g.has("infer_img"))
    throw ValueError(fmt::format("{}: no image to predict: name one on the command line or set Global.infer_img",
                                 r.file));
  return {g.text("infer_img")};
}

train::ExportResult OcrRecipeRunner::exported(const fs::path& dir, double max_abs_diff) {
  return {.files = {dir / "inference.onnx", dir / "inference.yml"}, .max_abs_diff = max_abs_diff};
}

namespace {
std::shared_ptr<const Schema> map_of(std::vector<Key> keys) { return std::make_shared<Schema>(Schema{std::move(keys)}); }
}  // namespace

Schema recipe_schema(std::vector<Key> extra_global, const RecipeKinds& kinds) {
  std::vector<Key> global = train::global_keys();
  for (auto& k : extra_global) global.push_back(std::move(k));
  auto loader = map_of({Key{.name = "batch_size_per_card", .type = Type::Integer, .min = 1},
                        Key{.name = "batch_size", .type = Type::Integer, .min = 1},
                        Key{.name = "shuffle", .type = Type::Boolean}, Key{.name = "drop_last", .type = Type::Boolean},
                        Key{.name = "num_workers", .type = Type::Integer, .min = 0, .max = 64},
                        Key{.name = "use_shared_memory", .type = Type::Boolean, .help = "accepted for PaddleOCR recipes"}});
  auto split = map_of({Key{.name = "dataset", .type = Type::Component, .required = true, .kind = kinds.dataset},
                       Key{.name = "loader", .type = Type::Map, .schema = loader}});
  return Schema{{
      Key{.name = "Global", .type = Type::Map, .required = true, .schema = map_of(global)},
      Key{.name = "Architecture", .type = Type::Component, .required = true, .kind = kinds.architecture},
      Key{.name = "Loss", .type = Type::Component, .required = true, .kind = kinds.loss},
      train::optimizer_key(),
      Key{.name = "PostProcess", .type = Type::Component, .kind = kinds.postprocess},
      Key{.name = "Metric", .type = Type::Component, .required = true, .kind = kinds.metric},
      Key{.name = "Train", .type = Type::Map, .required = true, .schema = split},
      Key{.name = "Eval", .type = Type::Map, .required = true, .schema = split},
  }};
}

data::DataLoaderOptions loader_options(const Recipe& r, const std::string& split, bool training) {
  config::Section loader = r.section(split).section("loader");
  data::DataLoaderOptions o;
  o.batch_size = loader.integer("batch_size_per_card", loader.integer("batch_size", 8, 1), 1);
  o.shuffle = loader.boolean("shuffle", training);
  o.drop_last = loader.boolean("drop_last", training);
  o.num_workers = int(loader.integer("num_workers", 0, 0));
  o.seed = uint64_t(r.section("Global").integer("seed", 42));
  return o;
}

void load_trained_weights(nn::Module& model, const Recipe& r) {
  config::Section g = r.section("Global");
  const fs::path best = fs::path(g.text("save_model_dir", "./output")) / "best_model.safetensors";
  const bool imported = r.section("Architecture").text("name") == "ImportedGraph";
  if (g.has("checkpoints")) {
    train::load_weights(model, g.text("checkpoints"));
    std::fprintf(stderr, "loaded weights from %s (Global.checkpoints)\n", g.text("checkpoints").c_str());
  } else if (fs::exists(best)) {
    train::load_weights(model, best);
    std::fprintf(stderr, "loaded weights from %s (the run's best model; set Global.checkpoints to choose another)\n",
                 best.c_str());
  } else if (g.has("pretrained_model")) {
    // ImportedGraph built its weights from the ONNX file; other architectures load the weights file now.
    const std::string pretrained = g.text("pretrained_model");
    fs::path file = imported ? zoo::resolve_model_path(pretrained) : load_pretrained_weights(model, r);
    std::fprintf(stderr, "loaded weights from %s (Global.pretrained_model '%s'; no trained model in %s)\n",
                 file.c_str(), pretrained.c_str(), best.parent_path().c_str());
  } else if (g.boolean("allow_random_init", false)) {
    std::fprintf(stderr, "warning: running randomly initialised weights (Global.allow_random_init)\n");
  } else {
    // A random model evaluates to zero and exports a model that reads nothing: never silently.
    throw ValueError(fmt::format(
        "{}: no weights to run: Global.checkpoints is not set, {} does not exist and Global.pretrained_model is not "
        "set. Train first (skiff train -c {}), point Global.checkpoints at a weights file, or add -o "
        "Global.allow_random_init=true to run an untrained model",
        r.file, best.string(), r.file));
  }
  model.eval();
}

fs::path load_pretrained_weights(nn::Module& model, const Recipe& r) {
  config::Section g = r.section("Global");
  std::string pretrained = g.text("pretrained_model", "");
  if (pretrained.empty()) return {};
  fs::path file = zoo::resolve_model_path(pretrained);
  if (file.extension() == ".onnx")
    throw ValueError(fmt::format("{}: '{}' is an ONNX model; {} starts from a weights file of its own architecture "
                                 "(.safetensors, e.g. another run's best_model.safetensors)",
                                 g.where("pretrained_model"), pretrained, r.section("Architecture").text("name")));
  train::load_weights(model, file);
  return file;
}

void record_recipe(const Recipe& r, train::TrainerOptions& o) {
  o.metadata["skiff.recipe"] = config::to_yaml(r.root);
  fs::create_directories(o.output_dir);
  io::write_file_atomic(o.output_dir / "config.yml", config::to_yaml(r.root));
}

}  // namespace skiff::ocr
