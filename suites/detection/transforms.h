#pragma once
/// \file transforms.h
/// PaddleDetection's reader transforms for training and evaluating detectors,
/// built from a reader section exactly as PaddleDetection writes it:
///
///   TrainReader:
///     sample_transforms:
///     - Decode: {}
///     - RandomCrop: {}
///     - RandomFlip: {prob: 0.5}
///     - RandomDistort: {}
///     batch_transforms:
///     - BatchRandomResize: {target_size: [256, 288, 320, 352], random_size: True, random_interp: True, keep_ratio: False}
///     - NormalizeImage: {is_scale: true, mean: [0.485,0.456,0.406], std: [0.229, 0.224,0.225]}
///     - Permute: {}
///     - PadGT: {}
///     batch_size: 16
///
/// Sample transforms run on one DetSample; batch transforms on the samples of
/// a batch (a sample transform listed there runs on each sample). Boxes move
/// with every geometric step. The list is checked when built: an unknown name
/// or key, a bad value, or a step placed before the one that gives its input
/// (e.g. NormalizeImage before Decode) is a ValueError naming file:line and
/// the key ("r.yml:5: TrainReader.sample_transforms[2].RandomFlip.prob: must be <= 1, got 2").
///
/// Conventions, as PaddleDetection's:
///   - Decode gives HWC uint8 BGR (cv::Mat); NormalizeImage's mean/std are in
///     R, G, B order, and collate_det_batch() writes channels R, G, B, as the
///     network sees PaddleDetection's RGB input.
///   - boxes are [x0, y0, x1, y1] floats in the current image's pixels;
///   - scale_factor = (current size / original size) as [y, x]: a prediction
///     maps back to the original image by dividing by it (after undoing any crop,
///     which only training pipelines use).
///   - probabilities (`prob`) are the chance that the step is applied.
///
/// Registered transforms (kind "det transform"): Decode, RandomCrop, RandomFlip,
/// RandomDistort, RandomExpand, Resize, BatchRandomResize, NormalizeImage,
/// Permute, PadBatch, PadGT.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "framework/config/schema.h"
#include "framework/core/rng.h"
#include "framework/tensor/tensor.h"
#include "suites/detection/boxes.h"

namespace skiff::detection {

/// One image and its ground truth on the way through the transforms.
struct DetSample {
  std::string path;   ///< image file (Decode reads it; with no path, Decode keeps an image already set)
  std::string where;  ///< "annotations.json: images[3]" or similar, for messages
  int64_t image_id = 0;
  cv::Mat image;      ///< HWC BGR: CV_8UC3 from Decode, CV_32FC3 after NormalizeImage
  std::vector<Box> boxes;          ///< xyxy, current pixels
  std::vector<int> labels;         ///< contiguous 0..C-1, one per box
  std::vector<uint8_t> is_crowd;   ///< 1 for crowd regions (not training targets), one per box
  int orig_h = 0, orig_w = 0;      ///< the decoded image's size
  float scale_y = 1, scale_x = 1;  ///< current size / original size (PaddleDetection's scale_factor)
  bool chw = false;                ///< Permute ran: collate_det_batch() writes [3, H, W]
};

/// A batch ready for a model.
struct DetBatch {
  Tensor images;        ///< [N, 3, H, W] float32, channels R, G, B; padded bottom/right with 0
  Tensor im_shape;      ///< [N, 2] float32: each image's (h, w) before padding
  Tensor scale_factor;  ///< [N, 2] float32: (scale_y, scale_x)
  Tensor orig_size;     ///< [N, 2] float32: original (h, w)
  /// Training targets per image: the non-crowd boxes and their labels.
  std::vector<std::vector<Box>> gt_boxes;
  std::vector<std::vector<int>> gt_labels;
  std::vector<std::vector<Box>> crowd_boxes;  ///< crowd regions per image
  /// From PadGT (undefined without it): the targets padded to M = max(1, most
  /// targets in an image): [N, M, 4] float32 xyxy, [N, M] int64 labels, [N, M] float32 mask (1 = real).
  Tensor pad_gt_boxes, pad_gt_labels, pad_gt_mask;
  std::vector<int64_t> image_ids;
  std::vector<std::string> paths;
};

/// What the batch transforms decided for collation.
struct BatchState {
  int pad_to_stride = -1;  ///< PadBatch's stride (0: pad to the largest only); -1: no PadBatch
  bool pad_gt = false;     ///< PadGT ran
};

/// One reader transform. Transforms hold only their settings: apply() may run
/// on several threads at once, each with its own generator.
class DetTransform {
 public:
  virtual ~DetTransform() = default;
  /// Keys this step reads, gives and removes ("image", "hwc", "chw"), checked in list order.
  virtual std::vector<std::string> needs() const { return {"image", "hwc"}; }
  virtual std::vector<std::string> gives() const { return {}; }
  virtual std::vector<std::string> removes() const { return {}; }
  /// True for steps that only make sense on a batch (BatchRandomResize, PadBatch, PadGT).
  virtual bool batch_only() const { return false; }
  /// One sample; `gen` drives every random choice.
  virtual void apply(DetSample& sample, Generator& gen) const = 0;
  /// The samples of a batch (default: apply() to each in order).
  virtual void apply_batch(std::vector<DetSample>& batch, BatchState& state, Generator& gen) const;
};

/// The registered transforms (kind "det transform"), each with its schema.
using DetTransformFactory = config::Factory<std::unique_ptr<DetTransform>>;
const DetTransformFactory& det_transforms();

/// A reader's sample_transforms and batch_transforms.
class DetPipeline {
 public:
  /// Builds both lists of `reader` (either may be absent) and checks them
  /// (names, settings, order; a batch-only step in sample_transforms).
  /// \throws ValueError naming file:line and the key.
  explicit DetPipeline(const config::Section& reader);

  /// Every sample transform, in order.
  void run_sample(DetSample& sample, Generator& gen) const;
  /// Every batch transform, in order, then collate_det_batch().
  DetBatch run_batch(std::vector<DetSample> batch, Generator& gen) const;
  /// run_sample() on each (in order, with the same generator), then run_batch().
  DetBatch run(std::vector<DetSample> batch, Generator& gen) const;
  const std::string& where() const { return where_; }

 private:
  std::vector<std::unique_ptr<DetTransform>> sample_, batch_;
  std::string where_;
};

/// The batch as tensors (see DetBatch). Images of different sizes need PadBatch
/// (state.pad_to_stride >= 0). \throws ValueError naming the samples when an
/// image is not CHW yet (no Permute), when sizes differ without PadBatch, or when the batch is empty.
DetBatch collate_det_batch(std::vector<DetSample> batch, const BatchState& state);

/// A reader's other keys, as PaddleDetection spells them.
struct DetReaderSettings {
  int batch_size = 1;
  bool shuffle = false;
  bool drop_last = false;
};
/// \throws ValueError naming file:line and the key for an unknown key or a bad value.
DetReaderSettings read_det_reader_settings(const config::Section& reader);

}  // namespace skiff::detection
