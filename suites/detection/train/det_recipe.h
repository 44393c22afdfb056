#pragma once
/// \file det_recipe.h
/// Object-detection recipes in PaddleDetection's layout (`task: detection`):
/// `skiff train / eval / predict / export -c configs/detection/picodet_*.yml`.
///
///   task: detection
///   architecture: PicoDet
///   PicoDet: {backbone: LCNet, neck: LCPAN, head: PicoHeadV2}
///   LCNet: {scale: 0.35}
///   LCPAN: {out_channels: 64}
///   PicoHeadV2: {feat_convs: 2, reg_max: 7, assigner: {topk: 13, alpha: 1.0, beta: 6.0}}
///   num_classes: 10
///   metric: COCO
///   epoch: 30
///   LearningRate:
///     base_lr: 0.02
///     schedulers:
///     - {name: CosineDecay, max_epochs: 30}
///     - {name: LinearWarmup, start_factor: 0.1, steps: 100}
///   OptimizerBuilder:
///     optimizer: {type: Momentum, momentum: 0.9}
///     regularizer: {type: L2, factor: 0.00004}
///   use_ema: true
///   ema_decay: 0.9998
///   TrainDataset: {name: COCODataSet, dataset_dir: ..., image_dir: ..., anno_path: ...}
///   EvalDataset:  {...}
///   TrainReader:  {sample_transforms: [...], batch_transforms: [...], batch_size: 16, shuffle: true}
///   EvalReader:   {...}
///
/// Training draws batch k of epoch e from the reader (the same batch whenever
/// it is asked for), so a resumed run continues with the batches it would
/// have seen. Evaluation is COCO bbox mAP@[.5:.95] on EvalDataset (`mAP`, with
/// `AP50` and the rest of the 12 COCO numbers); `skiff export` writes
/// inference.onnx and PaddleDetection's inference.yml, which `skiff det
/// --model_dir` reads.
#include "framework/train/recipe_runner.h"

namespace skiff::detection {

class DetectionRecipeRunner : public train::RecipeRunner {
 public:
  std::string summary() const override { return "object detection (PicoDet, COCO data and mAP)"; }
  void check(const train::Recipe& recipe, const config::ValidateOptions& options) const override;
  train::FitResult train(const train::Recipe& recipe, const train::TrainRequest& request) const override;
  std::map<std::string, double> evaluate(const train::Recipe& recipe) const override;
  std::vector<std::string> predict(const train::Recipe& recipe, const train::PredictRequest& request) const override;
  std::filesystem::path default_export_dir(const train::Recipe& recipe) const override;
  train::RunOutput run_output(const train::Recipe& recipe) const override;
  train::ExportResult export_model(const train::Recipe& recipe, const std::filesystem::path& dir) const override;
};

/// The recipe's schema (top-level keys), for listings and checks.
const config::Schema& detection_recipe_schema();

}  // namespace skiff::detection
