#pragma once
/// \file recipe_common.h
/// What the multimodal recipes (`task: clip`, `task: caption`) share: the Train / Eval caption
/// splits and the Tokenizer section (their schema and readers), the batch sizes, where a run
/// writes, and the images of a split loaded as one tensor.
///
///   Tokenizer: {vocab: data/mm/vocab.txt}   (any file load_tokenizer reads, with [SEP] and [PAD])
///   Train / Eval: {dataset: {captions: FILE, image_dir: DIR}, loader: {batch_size_per_card: N}}

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "framework/config/schema.h"
#include "framework/text/tokenizer.h"
#include "framework/train/recipe_runner.h"
#include "suites/multimodal/caption_dataset.h"

namespace skiff::multimodal {

/// The schema of a Train or Eval section.
std::shared_ptr<const config::Schema> caption_split_schema();
/// The Tokenizer section's key.
config::Key tokenizer_key();

std::filesystem::path recipe_save_dir(const train::Recipe& r, const std::string& fallback);
/// \throws IoError naming the key when the file does not exist; ValueError when it lacks [SEP] / [PAD].
std::unique_ptr<text::Tokenizer> recipe_tokenizer(const train::Recipe& r);
/// The split's captioned images. \throws IoError naming the key when the file does not exist.
std::vector<CaptionedImage> recipe_split(const train::Recipe& r, const std::string& split);
int64_t recipe_batch_size(const train::Recipe& r, const std::string& split, int64_t fallback);
/// The weights a trained run is read from: Global.checkpoints, else save_dir/best_model.safetensors.
std::filesystem::path recipe_weights(const train::Recipe& r, const std::filesystem::path& save_dir);

/// The ImagePreprocess section of an exported model's inference.yml (load_images' resizing and
/// normalisation, written out for other runtimes).
YAML::Node image_preprocess_yaml(int64_t size);

/// One caption of each of `rows`' images for training step `step`, drawn with a generator seeded
/// by (seed, step), so a resumed run draws the same ones.
std::vector<std::string> pick_captions(const std::vector<CaptionedImage>& images, const std::vector<int64_t>& rows,
                                       uint64_t seed, int64_t step);

/// The images and captions of both splits, loaded for training.
struct TrainingData {
  std::vector<CaptionedImage> train, eval;
  Tensor train_images, eval_images;  ///< [N, 3, size, size]
  int64_t batch = 0;                 ///< Train.loader.batch_size_per_card
  int64_t per_epoch = 0;             ///< training batches per epoch
};

/// Reads both splits, checks there is at least one batch, loads the images at `image_size`.
/// \throws ValueError naming the key when the training split is smaller than a batch.
TrainingData load_training_data(const train::Recipe& r, int64_t image_size, bool quiet);

/// Trains the task `make_task` builds around the run's scheduler: trainer options from Global /
/// Optimizer (the metric Metric.main_indicator, else `default_metric`; higher is better), the
/// merged recipe and `model_json` (file name, content) written to the run directory, the
/// optimizer over `model`'s parameters, one phase, resumed as `request` says.
train::FitResult fit_recipe(const train::Recipe& r, const train::TrainRequest& request, nn::Module& model,
                            int64_t per_epoch, const std::string& default_metric,
                            const std::pair<std::string, std::string>& model_json,
                            const std::function<std::unique_ptr<train::TrainTask>(const optim::LRScheduler&)>& make_task);

/// The training rows of step k: a seeded permutation of `rows` per epoch, batch k % per_epoch of
/// it; the same step gives the same rows (exact resume).
class EpochOrder {
 public:
  EpochOrder(size_t rows, int64_t batch, uint64_t seed) : rows_(rows), batch_(batch), seed_(seed) {}
  int64_t per_epoch() const { return int64_t(rows_) / batch_; }
  std::vector<int64_t> rows(int64_t step);

 private:
  size_t rows_;
  int64_t batch_;
  uint64_t seed_;
  std::vector<int64_t> perm_;
  int64_t perm_epoch_ = -1;
};

}  // namespace skiff::multimodal
