#include "suites/ocr/train/det_recipe.h"

#include <cmath>
#include <mutex>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/data/image_io.h"
#include "framework/engine/predictor.h"
#include "framework/graph/onnx_export.h"
#include "framework/ops/ops.h"
#include "framework/train/recipe.h"
#include "framework/zoo/zoo.h"
#include "suites/ocr/det_inference_config.h"
#include "suites/ocr/draw_result.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/train/det_data.h"
#include "suites/ocr/train/det_loss.h"
#include "suites/ocr/train/det_metric.h"
#include "suites/ocr/train/det_model.h"
#include "suites/ocr/train/transforms.h"

namespace skiff::ocr {

namespace fs = std::filesystem;
using config::Key;
using config::Schema;
using config::Section;
using config::Type;

namespace {

// The det components, each kind a factory: a name that validates has a constructor.
using ArchitectureFactory = config::Factory<std::unique_ptr<DetModel>, const Section&>;
using PartFactory = config::Factory<void, DbNetOptions&>;  // a DB part fills its share of the options

Key unit_key(std::string name, std::string help) {
  return Key{.name = std::move(name), .type = Type::Number, .help = std::move(help), .min = 0, .max = 1};
}

const PartFactory& backbones() {
  static PartFactory f("det backbone");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("MiniResNet", "a stem and four residual stages at strides 4, 8, 16 and 32",
          Schema{{Key{.name = "channels", .type = Type::Integers, .help = "stem and stage channels (five)", .min = 1}}},
          [](const Section& s, DbNetOptions& o) {
            o.backbone_channels = s.integers("channels", o.backbone_channels, 1);
            if (o.backbone_channels.size() != 5)
              throw ValueError(fmt::format("{}: needs five channel counts (stem and four stages), got {}",
                                           s.where("channels"), o.backbone_channels.size()));
          });
  });
  return f;
}

const PartFactory& necks() {
  static PartFactory f("det neck");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("DBFPN", "feature pyramid fused at stride 4",
          Schema{{Key{.name = "out_channels", .type = Type::Integer, .help = "a multiple of 4", .min = 4}}},
          [](const Section& s, DbNetOptions& o) {
            o.fpn_channels = s.integer("out_channels", o.fpn_channels, 4);
            if (o.fpn_channels % 4 != 0)
              throw ValueError(fmt::format("{}: must be a multiple of 4, got {}", s.where("out_channels"), o.fpn_channels));
          });
  });
  return f;
}

const PartFactory& heads() {
  static PartFactory f("det head");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("DBHead", "probability and threshold maps at full size",
          Schema{{Key{.name = "k", .type = Type::Number, .help = "binarization steepness (50)", .min = 1}}},
          [](const Section& s, DbNetOptions& o) { o.k = s.number("k", o.k); });
  });
  return f;
}

const ArchitectureFactory& architectures() {
  static ArchitectureFactory f("det architecture");
  static std::once_flag once;
  std::call_once(once, [] {
    backbones(), necks(), heads();
    f.add("DB", "Differentiable Binarization text detector (Backbone MiniResNet, Neck DBFPN, Head DBHead)",
          Schema{{Key{.name = "model_type", .type = Type::String, .help = "det (text detection)", .required = true,
                      .choices = {"det"}},
                  Key{.name = "algorithm", .type = Type::String, .help = "a label for the run (DB)"},
                  Key{.name = "Transform", .type = Type::Any, .help = "must be empty"},
                  Key{.name = "Backbone", .type = Type::Component, .required = true, .kind = "det backbone"},
                  Key{.name = "Neck", .type = Type::Component, .required = true, .kind = "det neck"},
                  Key{.name = "Head", .type = Type::Component, .required = true, .kind = "det head"}}},
          [](const Section& s, const Section&) -> std::unique_ptr<DetModel> {
            if (s.has("Transform"))
              throw ValueError(fmt::format("{}: DB has no Transform stage; leave it empty", s.where("Transform")));
            DbNetOptions o;
            backbones().make(s.section("Backbone"), o);
            necks().make(s.section("Neck"), o);
            heads().make(s.section("Head"), o);
            return std::make_unique<DbNet>(o);
          });
    f.add("ImportedGraph", "the ONNX detector named by Global.pretrained_model (e.g. ppocr-v4-det), trained as a "
                           "graph module (its probability branch)",
          Schema{{Key{.name = "model_type", .type = Type::String, .help = "det (text detection)", .required = true,
                      .choices = {"det"}},
                  Key{.name = "algorithm", .type = Type::String, .help = "a label for the run (DB)"}}},
          [](const Section&, const Section& global) -> std::unique_ptr<DetModel> {
            if (!global.has("pretrained_model"))
              throw ValueError(fmt::format("{}: ImportedGraph needs Global.pretrained_model (a zoo name such as "
                                           "ppocr-v4-det or an .onnx file)",
                                           global.where("pretrained_model")));
            return std::make_unique<ImportedDetector>(zoo::resolve_model_path(global.text("pretrained_model")).string());
          });
  });
  return f;
}

const config::Factory<DbLossOptions>& losses() {
  static config::Factory<DbLossOptions> f("det loss");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("DBLoss", "balanced cross-entropy + masked L1 + dice (alpha, beta)",
          Schema{{Key{.name = "balance_loss", .type = Type::Boolean, .help = "must be true (hard negative mining)"},
                  Key{.name = "main_loss_type", .type = Type::String, .help = "binary-map loss", .choices = {"DiceLoss"}},
                  Key{.name = "alpha", .type = Type::Number, .help = "weight of the probability loss (5)", .min = 0},
                  Key{.name = "beta", .type = Type::Number, .help = "weight of the threshold loss (10)", .min = 0},
                  Key{.name = "ohem_ratio", .type = Type::Number, .help = "hard negatives per positive (3)", .min = 0}}},
          [](const Section& l) {
            if (!l.boolean("balance_loss", true))
              throw ValueError(fmt::format("{}: only the balanced loss is implemented", l.where("balance_loss")));
            return DbLossOptions{.alpha = l.number("alpha", 5), .beta = l.number("beta", 10),
                                 .negative_ratio = l.number("ohem_ratio", 3)};
          });
  });
  return f;
}

const config::Factory<MetricSpec>& metrics() {
  static config::Factory<MetricSpec> f("det metric");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("DetMetric", "precision, recall and hmean at IoU 0.5",
          Schema{{Key{.name = "main_indicator", .type = Type::String, .choices = {"hmean", "precision", "recall"}}}},
          [](const Section& s) { return MetricSpec{.main_indicator = s.text("main_indicator", "hmean")}; });
  });
  return f;
}

const config::Factory<DbParams>& postprocesses() {
  static config::Factory<DbParams> f("det postprocess");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("DBPostProcess", "probability map to boxes (also written into inference.yml)",
          Schema{{unit_key("thresh", "pixel threshold (0.3)"), unit_key("box_thresh", "minimum box score (0.6)"),
                  Key{.name = "max_candidates", .type = Type::Integer, .help = "contours looked at (1000)", .min = 1},
                  Key{.name = "unclip_ratio", .type = Type::Number, .help = "box expansion (1.5)", .min = 0},
                  Key{.name = "use_dilation", .type = Type::Boolean},
                  Key{.name = "score_mode", .type = Type::String, .choices = {"fast", "slow"}}}},
          [](const Section& s) { return read_db_postprocess(s); });
  });
  return f;
}

const DatasetFactory& datasets() {
  static DatasetFactory f("det dataset");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("SimpleDataSet", "label files of 'image_path<TAB>[{\"transcription\", \"points\"}]' lines",
          Schema{{Key{.name = "data_dir", .type = Type::Path, .help = "image paths are relative to it"},
                  Key{.name = "label_file_list", .type = Type::Paths, .required = true},
                  Key{.name = "ratio_list", .type = Type::Numbers, .help = "must be 1 per file", .min = 1, .max = 1},
                  Key{.name = "transforms", .type = Type::Components, .required = true, .kind = "transform"}}},
          make_simple_dataset);
  });
  return f;
}

// Registers every det component (the schema asks for them by kind).
void register_components() { architectures(), losses(), metrics(), postprocesses(), datasets(), transforms(); }

// ---- the transform lists ---------------------------------------------------------------------

std::shared_ptr<const TransformPipeline> pipeline_of(const Recipe& r, const std::string& split) {
  return std::make_shared<const TransformPipeline>(r.section(split).section("dataset"), TransformContext{});
}

// Train's list must give what the DB loss needs in every example.
void require_training_outputs(const TransformPipeline& p) {
  p.require_outputs({"image", "shrink_map", "shrink_mask", "threshold_map", "threshold_mask"});
}
std::shared_ptr<const TransformPipeline> train_pipeline(const Recipe& r) {
  auto p = pipeline_of(r, "Train");
  require_training_outputs(*p);
  return p;
}

// Eval's DetResizeForTest and NormalizeImage: what inference runs.
DetPreprocessParams eval_preprocess(const TransformPipeline& eval) {
  DetPreprocessParams p = eval.get<DetResizeForTest>("DetResizeForTest").params();
  const DetPreprocessParams& n = eval.get<NormalizeImage>("NormalizeImage").params();
  p.mean = n.mean, p.std = n.std, p.scale = n.scale;
  return p;
}
DetPreprocessParams eval_preprocess(const Recipe& r) { return eval_preprocess(*pipeline_of(r, "Eval")); }

DbParams db_params(const Recipe& r) { return postprocesses().make(r.section("PostProcess")); }

std::vector<DetSample> split_samples(const Recipe& r, const std::string& split) {
  Section dataset = r.section(split).section("dataset");
  auto samples = read_det_labels(dataset.texts("label_file_list"), dataset.text("data_dir", "."));
  if (samples.empty()) throw ValueError(fmt::format("{}: the label files list no image", dataset.where("label_file_list")));
  return samples;
}

cv::Mat bgr_image(const std::string& path) { return to_bgr8(read_image(path)); }

std::vector<TextBox> detect(DetModel& model, const cv::Mat& bgr, const DetPreprocessParams& pre, const DbParams& db) {
  return detect_text_boxes(bgr, pre, db, [&](const Tensor& x) {
    NoGradGuard no_grad;
    return model.forward(x);
  });
}

DetMetricResult run_eval(DetModel& model, const std::vector<DetSample>& samples, const DetPreprocessParams& pre,
                         const DbParams& db) {
  bool was_training = model.is_training();
  model.eval();
  DetMetric metric;
  for (const auto& s : samples) {
    std::vector<std::vector<cv::Point2f>> found;
    for (const auto& b : detect(model, bgr_image(s.image), pre, db))
      found.emplace_back(b.quad.pts.begin(), b.quad.pts.end());
    metric.add(s.polygons, found);
  }
  model.train(was_training);
  return metric.result();
}

std::map<std::string, double> metric_map(const DetMetricResult& m) {
  return {{"precision", m.precision}, {"recall", m.recall}, {"hmean", m.hmean}};
}

class DetTask : public train::TrainTask {
 public:
  DetTask(DetModel& model, std::vector<DetSample> eval, DetPreprocessParams pre, DbParams db, DbLossOptions loss)
      : model_(model), eval_(std::move(eval)), pre_(pre), db_(db), loss_(loss) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example& b) override { return db_loss(model_.maps(b.at("image")), b, loss_).total; }
  std::map<std::string, double> evaluate() override { return metric_map(run_eval(model_, eval_, pre_, db_)); }

 private:
  DetModel& model_;
  std::vector<DetSample> eval_;
  DetPreprocessParams pre_;
  DbParams db_;
  DbLossOptions loss_;
};

std::unique_ptr<DetModel> make_model(const Recipe& r) {
  return architectures().make(r.section("Architecture"), r.section("Global"));
}

std::unique_ptr<DetModel> trained_model(const Recipe& r) {
  auto model = make_model(r);
  load_trained_weights(*model, r);
  return model;
}

}  // namespace

const Schema& det_recipe_schema() {
  static const Schema schema = [] {
    register_components();
    return recipe_schema({Key{.name = "infer_img", .type = Type::String, .help = "default image for skiff predict"},
                          Key{.name = "save_res_path", .type = Type::String, .help = "accepted for PaddleOCR recipes"}},
                         {.architecture = "det architecture", .loss = "det loss", .metric = "det metric",
                          .postprocess = "det postprocess", .dataset = "det dataset"});
  }();
  return schema;
}

void DetRecipeRunner::check(const Recipe& r, const config::ValidateOptions& options) const {
  config::validate(r.top(), det_recipe_schema(), options);
  auto train_list = train_pipeline(r);
  const DetPreprocessParams& train = train_list->get<NormalizeImage>("NormalizeImage").params();
  DetPreprocessParams pre = eval_preprocess(r);
  if (train.mean != pre.mean || train.std != pre.std || train.scale != pre.scale)
    throw ValueError(fmt::format("{}: Train and Eval normalize differently (NormalizeImage); the exported model "
                                 "would see other inputs than it was trained on",
                                 r.section("Eval").section("dataset").where("transforms")));
  // Every component builds now, not hours into a run.
  losses().make(r.section("Loss"));
  metrics().make(r.section("Metric"));
  db_params(r);
}

train::FitResult train_detector(const Recipe& r, const std::optional<fs::path>& resume, bool quiet) {
  Section global = r.section("Global");
  train::seed_run(global);
  auto model = make_model(r);
  // A weights file on top of the architecture (ImportedGraph already holds the pretrained weights).
  if (r.section("Architecture").text("name") != "ImportedGraph") load_pretrained_weights(*model, r);

  DetPreprocessParams pre = eval_preprocess(r);
  auto train_set = datasets().make(r.section("Train").section("dataset"), TransformContext{});
  require_training_outputs(train_set->pipeline());
  data::DataLoader loader(train_set, loader_options(r, "Train", true));

  train::TrainerOptions o = train::trainer_options(global, r.section("Optimizer"), loader.num_batches());
  o.metric = metrics().make(r.section("Metric")).main_indicator;
  o.higher_is_better = true;
  o.quiet = quiet;
  record_recipe(r, o);
  Section l = r.section("Loss");
  DbLossOptions loss = losses().make(r.section("Loss"));
  auto opt = train::build_optimizer(r.section("Optimizer"), model->parameters(), o.epochs, loader.num_batches());
  DetTask task(*model, split_samples(r, "Eval"), pre, db_params(r), loss);
  train::Trainer trainer(task, *opt.optimizer, opt.scheduler.get(), loader, o);
  return trainer.fit(resume);
}

std::map<std::string, double> evaluate_detector(const Recipe& r) {
  auto model = trained_model(r);
  auto samples = split_samples(r, "Eval");
  auto m = run_eval(*model, samples, eval_preprocess(r), db_params(r));
  auto out = metric_map(m);
  out["samples"] = double(samples.size());
  return out;
}

std::vector<DetPrediction> predict_detector(const Recipe& r, const std::vector<std::string>& images) {
  auto model = trained_model(r);
  DetPreprocessParams pre = eval_preprocess(r);
  DbParams db = db_params(r);
  std::vector<DetPrediction> out;
  for (const auto& path : images) out.push_back({path, detect(*model, bgr_image(path), pre, db)});
  return out;
}

double export_detector(const Recipe& r, const fs::path& dir) {
  auto model = trained_model(r);
  graph::Graph g = model->inference_graph(64, 64);
  fs::create_directories(dir);
  graph::export_onnx(g, (dir / "inference.onnx").string());
  DetInferenceConfig ic{.model_name = r.section("Architecture").text("algorithm", "DB"),
                        .preprocess = eval_preprocess(r),
                        .db = db_params(r)};
  write_det_inference_config(dir / "inference.yml", ic);

  // The exported file must give the eager model's map, at another size than the traced one.
  Generator gen(7);
  Tensor x = rand({2, 3, 96, 160}, DType::Float32, &gen, -2.0, 2.0);
  Tensor eager;
  {
    NoGradGuard no_grad;
    eager = model->forward(x);
  }
  engine::Predictor exported((dir / "inference.onnx").string());
  Tensor onnx = exported.run(std::vector<Tensor>{x})[0];
  SKIFF_CHECK_SHAPE(onnx.shape() == eager.shape(), "exported model gives shape {}, the eager model {}", onnx.shape(),
                    eager.shape());
  return amax(abs(sub(onnx, eager))).item<double>();
}

}  // namespace skiff::ocr

namespace skiff::ocr {

train::FitResult DetRecipeRunner::train(const Recipe& r, const train::TrainRequest& request) const {
  return train_detector(r, resume_from(r, request), request.quiet);
}

std::map<std::string, double> DetRecipeRunner::evaluate(const Recipe& r) const { return evaluate_detector(r); }

std::vector<std::string> DetRecipeRunner::predict(const Recipe& r, const train::PredictRequest& request) const {
  std::vector<std::string> lines;
  for (const auto& p : predict_detector(r, predict_inputs(r, request))) {
    nlohmann::json boxes = nlohmann::json::array();
    for (const auto& b : p.boxes) {
      nlohmann::json points = nlohmann::json::array();
      for (const auto& q : b.quad.pts) points.push_back({int(q.x), int(q.y)});
      boxes.push_back({{"points", points}, {"score", std::round(b.score * 1e4) / 1e4}});
    }
    lines.push_back(fmt::format("{}\t{}", p.image, boxes.dump()));
    if (!request.save_dir.empty()) {
      std::vector<std::array<cv::Point2f, 4>> quads;
      for (const auto& b : p.boxes) quads.push_back(b.quad.pts);
      fs::create_directories(request.save_dir);
      fs::path out = request.save_dir / ("det_res_" + fs::path(p.image).filename().string());
      data::write_image_file(out.string(), draw_det_result(read_image(p.image), quads));
      std::fprintf(stderr, "wrote %s\n", out.c_str());
    }
  }
  return lines;
}

train::ExportResult DetRecipeRunner::export_model(const Recipe& r, const fs::path& dir) const {
  return exported(dir, export_detector(r, dir));
}

}  // namespace skiff::ocr
