#include "suites/detection/train/det_recipe.h"

#include <cmath>
#include <algorithm>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/engine/predictor.h"
#include "framework/graph/onnx_export.h"
#include "framework/io/file.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"
#include "suites/detection/boxes.h"
#include "suites/detection/coco_eval.h"
#include "suites/detection/det_dataset.h"
#include "suites/detection/train/gfl_loss.h"
#include "suites/detection/train/picodet.h"
#include "suites/detection/train/pretrained_gfl.h"

namespace skiff::detection {

namespace fs = std::filesystem;
using config::Key;
using config::keys;
using config::Schema;
using config::Section;
using config::Type;
using train::Recipe;

namespace {

// A head section's keys: its own, then the GFL loss weights and the assigner (read_loss).
std::shared_ptr<const Schema> head_keys(std::vector<Key> k) {
  k.push_back(Key{.name = "vfl_weight", .type = Type::Number, .min = 0});
  k.push_back(Key{.name = "giou_weight", .type = Type::Number, .min = 0});
  k.push_back(Key{.name = "dfl_weight", .type = Type::Number, .min = 0});
  k.push_back(Key{.name = "assigner", .type = Type::Map,
                  .schema = keys({Key{.name = "topk", .type = Type::Integer, .min = 1},
                                  Key{.name = "alpha", .type = Type::Number, .min = 0},
                                  Key{.name = "beta", .type = Type::Number, .min = 0}})});
  return keys(std::move(k));
}

// ---- the model -------------------------------------------------------------------------------

struct ModelSpec {
  std::string architecture;       ///< PicoDet (from scratch) or NanoDet (fine-tuned)
  PicoDetOptions picodet;
  PretrainedGflOptions pretrained;
  GflLossOptions loss;
};

// The GFL loss weights and the assigner, in the head's section (PicoHeadV2, or NanoDet).
void read_loss(const Section& head, GflLossOptions& loss) {
  loss.vfl_weight = head.number("vfl_weight", loss.vfl_weight);
  loss.giou_weight = head.number("giou_weight", loss.giou_weight);
  loss.dfl_weight = head.number("dfl_weight", loss.dfl_weight);
  Section assigner = head.section("assigner");
  loss.assigner.topk = int(assigner.integer("topk", loss.assigner.topk, 1));
  loss.assigner.alpha = assigner.number("alpha", loss.assigner.alpha);
  loss.assigner.beta = assigner.number("beta", loss.assigner.beta);
}

ModelSpec model_spec(const Recipe& r, int dataset_classes) {
  ModelSpec spec;
  Section top = r.top();
  const int64_t classes = top.integer("num_classes", dataset_classes, 1);
  if (classes != dataset_classes)
    throw ValueError(fmt::format("{}: num_classes is {} but TrainDataset has {} categories", top.where("num_classes"),
                                 classes, dataset_classes));
  spec.architecture = top.text("architecture");
  if (spec.architecture == "NanoDet") {
    Section nanodet = r.section("NanoDet");
    spec.pretrained.model = nanodet.text("pretrained", spec.pretrained.model);
    spec.pretrained.reg_max = int(nanodet.integer("reg_max", spec.pretrained.reg_max, 1));
    spec.pretrained.num_classes = int(classes);
    read_loss(nanodet, spec.loss);
    return spec;
  }
  spec.picodet.num_classes = int(classes);
  spec.picodet.backbone_scale = r.section("LCNet").number("scale", spec.picodet.backbone_scale);
  spec.picodet.neck_channels = r.section("LCPAN").integer("out_channels", spec.picodet.neck_channels, 8);
  Section head = r.section("PicoHeadV2");
  spec.picodet.feat_convs = int(head.integer("feat_convs", spec.picodet.feat_convs, 0));
  spec.picodet.reg_max = int(head.integer("reg_max", spec.picodet.reg_max, 1));
  read_loss(head, spec.loss);
  return spec;
}

std::unique_ptr<DenseDetector> build_model(const ModelSpec& spec) {
  if (spec.architecture == "NanoDet") return std::make_unique<PretrainedGflDetector>(spec.pretrained);
  return std::make_unique<PicoDet>(spec.picodet);
}

// ---- data ------------------------------------------------------------------------------------

struct Split {
  std::shared_ptr<const CocoDetDataset> dataset;
  std::shared_ptr<const DetPipeline> pipeline;
  DetReaderSettings settings;
};

Split split(const Recipe& r, const std::string& dataset_key, const std::string& reader_key) {
  Split s;
  s.dataset = std::make_shared<const CocoDetDataset>(r.section(dataset_key));
  s.pipeline = std::make_shared<const DetPipeline>(r.section(reader_key));
  s.settings = read_det_reader_settings(r.section(reader_key));
  return s;
}

uint64_t run_seed(const Recipe& r) { return uint64_t(r.top().integer("seed", 42, 0)); }

// ---- evaluation ------------------------------------------------------------------------------

// Detections of one batch in original-image pixels (COCO results, category ids of `data`).
void detect_batch(DenseDetector& model, const DetBatch& batch, const CocoDetDataset& data, float score_threshold,
                  std::vector<Detection>& out) {
  NoGradGuard no_grad;
  DenseOutputs d = model.dense(batch.images);
  const int64_t n = d.cls_logits.size(0), classes = d.cls_logits.size(2);
  const int bins = model.reg_max() + 1;
  Tensor probs = contiguous(sigmoid(d.cls_logits));
  Tensor logits = contiguous(d.reg_logits);
  const std::vector<float> scale = contiguous(batch.scale_factor).to_vector<float>();
  const std::vector<float> orig = contiguous(batch.orig_size).to_vector<float>();
  for (int64_t b = 0; b < n; ++b) {
    std::vector<GflLevel> levels;
    int64_t at = 0;
    for (size_t l = 0; l < d.level_heights.size(); ++l) {
      const int64_t cells = d.level_heights[l] * d.level_widths[l];
      const float* p = probs.data<float>() + (b * probs.size(1) + at) * classes;
      const float* g = logits.data<float>() + (b * logits.size(1) + at) * 4 * bins;
      levels.push_back({{p, size_t(cells * classes)}, {g, size_t(cells * 4 * bins)}, d.level_widths[l],
                        model.strides()[l]});
      at += cells;
    }
    GflDecodeOptions o;
    o.num_classes = int(classes);
    o.reg_max = model.reg_max();
    o.score_threshold = score_threshold;
    const float sy = scale[size_t(2 * b)], sx = scale[size_t(2 * b + 1)];
    const float h = orig[size_t(2 * b)], w = orig[size_t(2 * b + 1)];
    for (const DetectedBox& det : class_aware_nms(decode_gfl(levels, o), 0.6f, 100)) {
      const double x0 = std::clamp(det.box.x0 / sx, 0.f, w), y0 = std::clamp(det.box.y0 / sy, 0.f, h);
      const double x1 = std::clamp(det.box.x1 / sx, 0.f, w), y1 = std::clamp(det.box.y1 / sy, 0.f, h);
      if (x1 <= x0 || y1 <= y0) continue;
      out.push_back(Detection{batch.image_ids[size_t(b)], data.category_ids()[size_t(det.class_id)],
                              {x0, y0, x1 - x0, y1 - y0}, double(det.score)});
    }
  }
}

CocoEvalResult evaluate_split(DenseDetector& model, const Split& eval, uint64_t seed) {
  const bool was_training = model.is_training();
  model.eval();
  DetReaderSettings settings = eval.settings;
  settings.shuffle = false;
  settings.drop_last = false;
  DetLoader loader(eval.dataset, eval.pipeline, settings, seed);
  std::vector<Detection> detections;
  for (int64_t i = 0; i < loader.num_batches(); ++i)
    detect_batch(model, loader.batch(0, i), *eval.dataset, 0.01f, detections);
  model.train(was_training);
  return evaluate_coco(eval.dataset->coco(), detections);
}

// One line per category: its AP@[.5:.95], AP50 and ground-truth count (AP -1: no ground truth).
std::string per_class_table(const CocoEvalResult& r) {
  size_t width = 5;
  for (const CocoClassAp& c : r.per_class) width = std::max(width, c.name.size());
  std::string out = fmt::format("{:<{}}  {:>6}  {:>6}  {:>6}\n", "class", width, "AP", "AP50", "gt");
  for (const CocoClassAp& c : r.per_class)
    out += fmt::format("{:<{}}  {:>6.3f}  {:>6.3f}  {:>6}\n", c.name, width, c.ap, c.ap50, c.num_gt);
  return out;
}

std::map<std::string, double> metric_map(const CocoEvalResult& r) {
  static const char* names[12] = {"mAP", "AP50", "AP75", "APs", "APm", "APl",
                                  "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"};
  std::map<std::string, double> m;
  for (size_t i = 0; i < 12; ++i) m[names[i]] = r.stats[i];
  return m;
}

// ---- training --------------------------------------------------------------------------------

// Training draws its own batches: batch (step / per_epoch, step % per_epoch) of
// the reader, the step read from the schedule (which a checkpoint restores).
class DetectionTask : public train::TrainTask {
 public:
  DetectionTask(DenseDetector& model, GflLossOptions loss, std::shared_ptr<DetLoader> train, Split eval,
                const optim::LRScheduler& schedule, uint64_t seed)
      : model_(model), loss_(loss), train_(std::move(train)), eval_(std::move(eval)), schedule_(schedule),
        seed_(seed) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example&) override {
    const int64_t step = schedule_.last_epoch(), per_epoch = train_->num_batches();
    DetBatch batch = train_->batch(step / per_epoch, step % per_epoch);
    DenseOutputs d = model_.dense(batch.images);
    AnchorPoints anchors = anchor_points(d.level_heights, d.level_widths, model_.strides());
    std::vector<GroundTruth> truth;
    for (size_t i = 0; i < batch.gt_boxes.size(); ++i) truth.push_back({batch.gt_boxes[i], batch.gt_labels[i]});
    return gfl_loss(d, anchors, truth, model_.reg_max(), loss_).total;
  }
  std::map<std::string, double> evaluate() override { return metric_map(evaluate_split(model_, eval_, seed_)); }

 private:
  DenseDetector& model_;
  GflLossOptions loss_;
  std::shared_ptr<DetLoader> train_;
  Split eval_;
  const optim::LRScheduler& schedule_;
  uint64_t seed_;
};

std::unique_ptr<optim::Optimizer> make_optimizer(const Recipe& r, std::vector<Tensor> params, double lr) {
  Section builder = r.section("OptimizerBuilder");
  Section opt = builder.section("optimizer");
  Section reg = builder.section("regularizer");
  const double decay = reg.number("factor", 0.0);
  const std::string type = opt.text("type", "Momentum");
  if (type == "AdamW")
    return std::make_unique<optim::AdamW>(std::move(params),
                                          optim::AdamOptions{.lr = lr, .weight_decay = opt.number("weight_decay", decay)});
  return std::make_unique<optim::SGD>(std::move(params),
                                      optim::SGDOptions{.lr = lr, .momentum = opt.number("momentum", 0.9), .weight_decay = decay});
}

// LearningRate.schedulers: CosineDecay (max_epochs, in epochs) and LinearWarmup (steps, start_factor).
std::unique_ptr<optim::LRScheduler> make_schedule(const Recipe& r, optim::Optimizer& opt, int64_t per_epoch) {
  Section lr = r.section("LearningRate");
  int64_t cosine_steps = 0, warmup = 0;
  double start_factor = 0.1;
  YAML::Node list = lr.get("schedulers");
  if (list && !list.IsNull()) {
    if (!list.IsSequence()) throw ValueError(fmt::format("{}: expected a list of schedulers", lr.where("schedulers")));
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string name = list[i]["name"] ? list[i]["name"].as<std::string>() : "";
      if (name == "CosineDecay") {
        cosine_steps = (list[i]["max_epochs"] ? list[i]["max_epochs"].as<int64_t>() : 0) * per_epoch;
      } else if (name == "LinearWarmup") {
        warmup = list[i]["steps"] ? list[i]["steps"].as<int64_t>() : 0;
        start_factor = list[i]["start_factor"] ? list[i]["start_factor"].as<double>() : start_factor;
      } else {
        throw ValueError(fmt::format("{}[{}]: unknown scheduler '{}' (CosineDecay, LinearWarmup)",
                                     lr.where("schedulers"), i, name));
      }
    }
  }
  std::unique_ptr<optim::LRScheduler> inner;
  if (cosine_steps > 0)
    inner = std::make_unique<optim::CosineAnnealingLR>(opt, std::max<int64_t>(1, cosine_steps - warmup));
  else
    inner = std::make_unique<optim::ConstantLR>(opt, 1.0, 0);
  return std::make_unique<optim::LinearWarmup>(std::move(inner), warmup, start_factor);
}

fs::path save_dir(const Recipe& r) { return r.top().text("save_dir", "output/detection"); }

// The weights a non-training command runs: `weights`, else <save_dir>/best_model.safetensors.
std::unique_ptr<DenseDetector> trained_model(const Recipe& r, const CocoDetDataset& data) {
  auto model = build_model(model_spec(r, data.num_classes()));
  fs::path weights = r.top().has("weights") ? fs::path(r.top().text("weights")) : save_dir(r) / "best_model.safetensors";
  if (!fs::exists(weights))
    throw IoError(fmt::format("{}: no trained weights at {} (train first, or set weights:)", r.file, weights.string()));
  train::load_weights(*model, weights);
  std::fprintf(stderr, "loaded %s\n", weights.c_str());
  model->eval();
  return model;
}

}  // namespace

const Schema& detection_recipe_schema() {
  static const Schema schema{{
      Key{.name = "task", .type = Type::String, .help = "detection", .required = true, .choices = {"detection"}},
      Key{.name = "architecture", .type = Type::String,
          .help = "the detector: PicoDet (from scratch) or NanoDet (fine-tuned from pretrained weights)",
          .required = true, .choices = {"PicoDet", "NanoDet"}},
      Key{.name = "NanoDet", .type = Type::Map, .help = "a pretrained GFL detector, its classifier replaced",
          .schema = head_keys({Key{.name = "pretrained", .type = Type::String, .help = "zoo name, model.json or .onnx"},
                               Key{.name = "reg_max", .type = Type::Integer, .help = "the model's distance bins - 1",
                                   .min = 1, .max = 32}})},
      Key{.name = "PicoDet", .type = Type::Map, .help = "its parts",
          .schema = keys({Key{.name = "backbone", .type = Type::String, .choices = {"LCNet"}},
                          Key{.name = "neck", .type = Type::String, .choices = {"LCPAN"}},
                          Key{.name = "head", .type = Type::String, .choices = {"PicoHeadV2"}}})},
      Key{.name = "LCNet", .type = Type::Map,
          .schema = keys({Key{.name = "scale", .type = Type::Number, .help = "width multiplier", .min = 0.05, .max = 4}})},
      Key{.name = "LCPAN", .type = Type::Map,
          .schema = keys({Key{.name = "out_channels", .type = Type::Integer, .min = 8}})},
      Key{.name = "PicoHeadV2", .type = Type::Map,
          .schema = head_keys({Key{.name = "feat_convs", .type = Type::Integer, .help = "convs per level", .min = 0, .max = 8},
                               Key{.name = "reg_max", .type = Type::Integer, .help = "distance bins - 1", .min = 1, .max = 32}})},
      Key{.name = "num_classes", .type = Type::Integer, .help = "must equal the dataset's categories", .min = 1},
      Key{.name = "metric", .type = Type::String, .choices = {"COCO"}},
      Key{.name = "epoch", .type = Type::Integer, .required = true, .min = 1},
      Key{.name = "max_iters", .type = Type::Integer, .help = "stop after this many steps (0: all epochs)", .min = 0},
      Key{.name = "LearningRate", .type = Type::Map, .required = true,
          .schema = keys({Key{.name = "base_lr", .type = Type::Number, .required = true, .min = 0},
                          Key{.name = "schedulers", .type = Type::Any, .help = "CosineDecay, LinearWarmup"}})},
      Key{.name = "OptimizerBuilder", .type = Type::Map,
          .schema = keys({Key{.name = "optimizer", .type = Type::Map,
                              .schema = keys({Key{.name = "type", .type = Type::String, .choices = {"Momentum", "AdamW"}},
                                              Key{.name = "momentum", .type = Type::Number, .min = 0, .max = 1},
                                              Key{.name = "weight_decay", .type = Type::Number, .min = 0}})},
                          Key{.name = "regularizer", .type = Type::Map,
                              .schema = keys({Key{.name = "type", .type = Type::String, .choices = {"L2"}},
                                              Key{.name = "factor", .type = Type::Number, .min = 0}})},
                          Key{.name = "clip_grad_by_norm", .type = Type::Number, .min = 0}})},
      Key{.name = "use_ema", .type = Type::Boolean},
      Key{.name = "ema_decay", .type = Type::Number, .min = 0, .max = 1},
      Key{.name = "log_iter", .type = Type::Integer, .min = 1},
      Key{.name = "snapshot_epoch", .type = Type::Integer, .help = "evaluate and save every N epochs", .min = 1},
      Key{.name = "save_dir", .type = Type::String},
      Key{.name = "weights", .type = Type::String, .help = "weights for eval / predict / export"},
      Key{.name = "seed", .type = Type::Integer, .min = 0},
      Key{.name = "draw_threshold", .type = Type::Number, .min = 0, .max = 1},
      Key{.name = "TrainDataset", .type = Type::Any, .required = true},
      Key{.name = "EvalDataset", .type = Type::Any, .required = true},
      Key{.name = "TrainReader", .type = Type::Any, .required = true},
      Key{.name = "EvalReader", .type = Type::Any, .required = true},
  }};
  return schema;
}

void DetectionRecipeRunner::check(const Recipe& r, const config::ValidateOptions& options) const {
  config::validate(r.top(), detection_recipe_schema(), options);
  // The readers and schedules build now, not hours into a run.
  DetPipeline train_reader(r.section("TrainReader"));
  DetPipeline eval_reader(r.section("EvalReader"));
  read_det_reader_settings(r.section("TrainReader"));
  read_det_reader_settings(r.section("EvalReader"));
}

train::FitResult DetectionRecipeRunner::train(const Recipe& r, const train::TrainRequest& request) const {
  const uint64_t seed = run_seed(r);
  manual_seed(seed);
  Split train_split = split(r, "TrainDataset", "TrainReader");
  Split eval_split = split(r, "EvalDataset", "EvalReader");
  ModelSpec spec = model_spec(r, train_split.dataset->num_classes());
  std::unique_ptr<DenseDetector> model = build_model(spec);
  auto loader = std::make_shared<DetLoader>(train_split.dataset, train_split.pipeline, train_split.settings, seed);
  const int64_t per_epoch = loader->num_batches();
  SKIFF_CHECK(per_epoch > 0, "{}: TrainDataset has fewer images than one batch", r.file);
  Section top = r.top();
  const int64_t epochs = top.integer("epoch", std::nullopt, 1);
  int64_t total = epochs * per_epoch;
  if (top.integer("max_iters", 0, 0) > 0) total = std::min(total, top.integer("max_iters", 0, 0));

  auto optimizer = make_optimizer(r, model->parameters(), r.section("LearningRate").number("base_lr"));
  auto schedule = make_schedule(r, *optimizer, per_epoch);
  DetectionTask task(*model, spec.loss, loader, eval_split, *schedule, seed);

  train::TrainerOptions o;
  o.output_dir = save_dir(r);
  o.epochs = epochs;
  o.max_steps = total;
  o.log_every = top.integer("log_iter", 20, 1);
  o.eval_every = top.integer("snapshot_epoch", 1, 1) * per_epoch;
  o.checkpoint_every = o.eval_every;
  o.metric = "mAP";
  o.higher_is_better = true;
  o.ema_decay = top.boolean("use_ema", false) ? top.number("ema_decay", 0.9998) : 0.0;
  o.clip_norm = r.section("OptimizerBuilder").number("clip_grad_by_norm", 0.0);
  o.quiet = request.quiet;
  o.metadata["skiff.recipe"] = config::to_yaml(r.root);
  fs::create_directories(o.output_dir);
  io::write_file_atomic(o.output_dir / "config.yml", config::to_yaml(r.root));

  std::vector<train::TrainPhase> phases{
      train::TrainPhase{.name = "train", .optimizer = optimizer.get(), .scheduler = schedule.get(), .steps = total}};
  train::Trainer trainer(task, std::move(phases), nullptr, o);
  return trainer.fit(train::resume_checkpoint(request, o.output_dir));
}

std::map<std::string, double> DetectionRecipeRunner::evaluate(const Recipe& r) const {
  Split eval = split(r, "EvalDataset", "EvalReader");
  auto model = trained_model(r, *eval.dataset);
  CocoEvalResult result = evaluate_split(*model, eval, run_seed(r));
  std::fputs(coco_summary_text(result).c_str(), stderr);
  std::fputs(per_class_table(result).c_str(), stderr);
  // The full report (the 12 numbers and per-class AP) beside the weights, as a file for scripts.
  const fs::path report = save_dir(r) / "eval_coco.json";
  fs::create_directories(report.parent_path());
  write_coco_eval_json(report, result);
  std::fprintf(stderr, "wrote %s\n", report.string().c_str());
  auto m = metric_map(result);
  m["samples"] = double(eval.dataset->size());
  return m;
}

std::vector<std::string> DetectionRecipeRunner::predict(const Recipe& r, const train::PredictRequest& request) const {
  Split eval = split(r, "EvalDataset", "EvalReader");
  auto model = trained_model(r, *eval.dataset);
  SKIFF_CHECK(!request.inputs.empty(), "{}: skiff predict needs image files for a detection recipe", r.file);
  const float threshold = float(r.top().number("draw_threshold", 0.5));
  std::vector<std::string> lines;
  Generator gen(run_seed(r));
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    DetSample s;
    s.path = request.inputs[i];
    s.where = request.inputs[i];
    s.image_id = int64_t(i);
    std::vector<Detection> found;
    detect_batch(*model, eval.pipeline->run({s}, gen), *eval.dataset, threshold, found);
    nlohmann::json boxes = nlohmann::json::array();
    for (const Detection& d : found) {
      const auto& ids = eval.dataset->category_ids();
      const size_t label = size_t(std::find(ids.begin(), ids.end(), d.category_id) - ids.begin());
      boxes.push_back({{"cls_id", label}, {"label", eval.dataset->class_names()[label]},
                       {"score", std::round(d.score * 1e4) / 1e4},
                       {"coordinate", {std::round(d.bbox[0] * 100) / 100, std::round(d.bbox[1] * 100) / 100,
                                       std::round((d.bbox[0] + d.bbox[2]) * 100) / 100,
                                       std::round((d.bbox[1] + d.bbox[3]) * 100) / 100}}});
    }
    lines.push_back(fmt::format("{}\t{}", request.inputs[i], boxes.dump()));
  }
  return lines;
}

fs::path DetectionRecipeRunner::default_export_dir(const Recipe& r) const { return save_dir(r) / "inference"; }
train::RunOutput DetectionRecipeRunner::run_output(const Recipe& r) const { return {save_dir(r), "save_dir"}; }

train::ExportResult DetectionRecipeRunner::export_model(const Recipe& r, const fs::path& dir) const {
  Split eval = split(r, "EvalDataset", "EvalReader");
  auto model = trained_model(r, *eval.dataset);
  // The export takes the size EvalReader resizes to.
  Generator gen(run_seed(r));
  DetBatch probe = eval.pipeline->run({eval.dataset->record(0)}, gen);
  const int h = int(probe.images.size(2)), w = int(probe.images.size(3));
  fs::create_directories(dir);
  graph::export_onnx(model->inference_graph(h, w), (dir / "inference.onnx").string());
  // PaddleDetection's deploy layout: the preprocessing as EvalReader writes it, the labels, the threshold.
  YAML::Node yml;
  yml["mode"] = "paddle";
  yml["arch"] = r.top().text("architecture");
  yml["min_subgraph_size"] = 3;
  yml["draw_threshold"] = r.top().number("draw_threshold", 0.5);
  yml["reg_max"] = model->reg_max();
  // Each EvalReader step `- Name: {keys}` becomes `- {type: Name, keys}`; Decode is implied.
  for (const YAML::Node& step : r.root["EvalReader"]["sample_transforms"]) {
    if (!step.IsMap() || step.size() != 1) continue;
    const std::string type = step.begin()->first.as<std::string>();
    if (type == "Decode") continue;
    YAML::Node entry;
    entry["type"] = type;
    for (const auto& kv : step.begin()->second) entry[kv.first.as<std::string>()] = kv.second;
    yml["Preprocess"].push_back(entry);
  }
  for (const auto& name : eval.dataset->class_names()) yml["label_list"].push_back(name);
  io::write_file_atomic(dir / "inference.yml", config::to_yaml(yml));

  // The exported file must give the eager model's outputs.
  Tensor eager_cls;
  {
    NoGradGuard no_grad;
    eager_cls = sigmoid(model->dense(probe.images).cls_logits);
  }
  engine::Predictor exported((dir / "inference.onnx").string());
  std::vector<Tensor> outs = exported.run(std::vector<Tensor>{probe.images});
  std::vector<Tensor> cls(outs.begin(), outs.begin() + 3);
  train::ExportResult result;
  result.files = {dir / "inference.onnx", dir / "inference.yml"};
  result.max_abs_diff = amax(abs(sub(concat(cls, 1), eager_cls))).item<double>();
  return result;
}

}  // namespace skiff::detection
