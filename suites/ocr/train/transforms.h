#pragma once
/// \file transforms.h
/// A dataset's `transforms:` list, with PaddleOCR's semantics: a pipeline run
/// in the order written, each entry a registered transform built from its
/// validated settings, passing one sample (PaddleOCR's `data` dict) along.
///
///   transforms:
///     - DecodeImage: {img_mode: BGR}            # image
///     - DetLabelEncode:                         # polys, ignore_tags
///     - EastRandomCropData: {size: [640, 640]}  # image, polys
///     - MakeShrinkMap: {shrink_ratio: 0.4}      # shrink_map, shrink_mask
///     - NormalizeImage: {...}
///     - ToCHWImage:                             # image as a [3, H, W] tensor
///     - KeepKeys: {keep_keys: [image, shrink_map, shrink_mask]}
///
/// Each transform says which keys it needs and which it gives, and the list is
/// checked when it is built: a transform placed before the one that gives its
/// input is an error naming both ("MakeShrinkMap needs 'polys': put
/// DetLabelEncode before it"). Label encoders (DetLabelEncode, CTCLabelEncode)
/// also run once per sample when the dataset is built, so unreadable labels stop
/// the run at once and unusable lines are dropped and counted.
///
/// Registered transforms (kind "transform"):
///   DecodeImage, DetLabelEncode, IaaAugment, EastRandomCropData, MakeBorderMap,
///   MakeShrinkMap, DetResizeForTest, NormalizeImage, ToCHWImage, RecAug,
///   CTCLabelEncode, RecResizeImg, KeepKeys
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "framework/config/schema.h"
#include "framework/core/rng.h"
#include "framework/data/dataset.h"
#include "suites/ocr/ctc_decode.h"
#include "suites/ocr/preprocess.h"
#include "suites/ocr/train/det_data.h"

namespace skiff::ocr {

/// One sample on its way through a transform list.
struct OcrSample {
  std::string image_path;  ///< full path (data_dir joined)
  std::string label;       ///< the label file's text after the tab
  std::string where;       ///< "label_file:line", for messages
  cv::Mat image;           ///< HWC: BGR uint8 from DecodeImage, float32 after NormalizeImage
  std::vector<DetPolygon> polys;        ///< DetLabelEncode's regions, moved by the augmenters
  std::map<std::string, Tensor> out;    ///< finished tensors: image [3, H, W], label, length, shrink_map, ...
};

/// One step of a pipeline. Transforms hold only their settings: apply() may run
/// on several threads at once (data-loader workers).
class Transform {
 public:
  virtual ~Transform() = default;
  /// Keys this step reads, and the keys it adds or replaces (checked in list order).
  virtual std::vector<std::string> needs() const { return {}; }
  virtual std::vector<std::string> gives() const { return {}; }
  /// Runs once per sample when the dataset is built; false drops the sample.
  /// \throws ValueError naming sample.where for a label that cannot be read.
  virtual bool prepare(OcrSample&) const { return true; }
  /// Runs on every read of the sample; `gen` drives any random choice.
  virtual void apply(OcrSample& sample, Generator& gen) const = 0;
};

/// What some transforms need besides their settings.
struct TransformContext {
  const Charset* charset = nullptr;  ///< CTCLabelEncode's dictionary
  int max_text_length = 25;          ///< Global.max_text_length
};

/// The registered transforms (kind "transform"), each with its schema.
using TransformFactory = config::Factory<std::unique_ptr<Transform>, const TransformContext&>;
const TransformFactory& transforms();

/// The transforms of `dataset.transforms`, in order.
class TransformPipeline {
 public:
  /// Builds every entry and checks the order (see the file comment).
  /// \throws ValueError naming the entry.
  TransformPipeline(const config::Section& dataset, const TransformContext& context);

  /// Runs every prepare() in order; false when one drops the sample.
  bool prepare(OcrSample& sample) const;
  /// Runs every apply() in order and returns the finished tensors (those KeepKeys
  /// names when the list ends with it, else all).
  data::Example run(OcrSample sample, Generator& gen) const;

  /// The keys the pipeline's examples hold. \throws ValueError naming the list
  /// when one of `needed` is missing.
  void require_outputs(const std::vector<std::string>& needed) const;
  /// The first step of type T, or nullptr.
  template <class T>
  const T* find() const {
    for (const auto& s : steps_)
      if (auto* t = dynamic_cast<const T*>(s.get())) return t;
    return nullptr;
  }
  /// Like find(), but \throws ValueError naming the list when there is none.
  template <class T>
  const T& get(const std::string& name) const {
    if (const T* t = find<T>()) return *t;
    throw_missing(name);
  }
  const std::string& where() const { return where_; }

 private:
  [[noreturn]] void throw_missing(const std::string& name) const;
  std::vector<std::unique_ptr<Transform>> steps_;
  std::vector<std::string> outputs_;
  std::string where_;  ///< "file:line: Train.dataset.transforms"
};

/// A SimpleDataSet: label-file lines through a transform pipeline.
class TransformDataset : public data::Dataset {
 public:
  /// Prepares every line (labels read and encoded, images checked to exist);
  /// lines a label encoder drops are counted in skipped().
  /// \throws ValueError if no sample is left, IoError naming a missing image.
  TransformDataset(std::vector<OcrSample> samples, std::shared_ptr<const TransformPipeline> pipeline);

  int64_t size() const override { return int64_t(samples_.size()); }
  data::Example get(int64_t index) const override;
  data::Example get(int64_t index, Generator& gen) const override;
  int64_t skipped() const { return skipped_; }
  const std::vector<OcrSample>& samples() const { return samples_; }
  const TransformPipeline& pipeline() const { return *pipeline_; }

 private:
  std::vector<OcrSample> samples_;
  std::shared_ptr<const TransformPipeline> pipeline_;
  int64_t skipped_ = 0;
};

/// The lines of a dataset's label files as samples to prepare.
std::vector<OcrSample> read_samples(const std::vector<std::string>& label_files, const std::string& data_dir);

/// SimpleDataSet (PaddleOCR's): the lines of label_file_list (paths relative to
/// data_dir) through the pipeline of `transforms`.
std::shared_ptr<TransformDataset> make_simple_dataset(const config::Section& dataset, const TransformContext& context);
/// The rec and det dataset kinds: SimpleDataSet built with a transform context.
using DatasetFactory = config::Factory<std::shared_ptr<TransformDataset>, const TransformContext&>;

// ---- transforms whose settings evaluation and export read -----------------------------------

/// NormalizeImage: (x * scale - mean[c]) / std[c] per channel, to float32.
class NormalizeImage final : public Transform {
 public:
  explicit NormalizeImage(const config::Section& settings);
  std::vector<std::string> needs() const override { return {"image"}; }
  std::vector<std::string> gives() const override { return {"image"}; }
  void apply(OcrSample& sample, Generator& gen) const override;
  /// mean, std and scale (the rest at defaults).
  const DetPreprocessParams& params() const { return params_; }

 private:
  DetPreprocessParams params_;
};

/// DetResizeForTest: the evaluation / inference size rule (multiples of 32).
class DetResizeForTest final : public Transform {
 public:
  explicit DetResizeForTest(const config::Section& settings);
  std::vector<std::string> needs() const override { return {"image"}; }
  std::vector<std::string> gives() const override { return {"image", "shape"}; }
  void apply(OcrSample& sample, Generator& gen) const override;
  /// limit_side_len and limit_type (the rest at defaults).
  const DetPreprocessParams& params() const { return params_; }

 private:
  DetPreprocessParams params_;
};

/// RecResizeImg: resize to [3, H, W] keeping the ratio, to [-1, 1], pad right.
class RecResizeImg final : public Transform {
 public:
  explicit RecResizeImg(const config::Section& settings);
  std::vector<std::string> needs() const override { return {"image"}; }
  std::vector<std::string> gives() const override { return {"image"}; }
  void apply(OcrSample& sample, Generator& gen) const override;
  int height() const { return height_; }
  int width() const { return width_; }

 private:
  int height_ = 48, width_ = 320;
};

}  // namespace skiff::ocr
