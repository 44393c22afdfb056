#pragma once
/// \file det_dataset.h
/// PaddleDetection's COCODataSet for training and evaluation: a COCO
/// ground-truth file read into DetSample records (transforms.h) with
/// contiguous labels, and batches drawn through a DetPipeline.
///
///   TrainDataset:
///     name: COCODataSet            # or PaddleDetection's tag: `TrainDataset: !COCODataSet`
///     dataset_dir: data/shapes
///     image_dir: images
///     anno_path: annotations.json
///     data_fields: ['image', 'gt_bbox', 'gt_class', 'is_crowd']
///     allow_empty: false
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/config/section.h"
#include "framework/core/rng.h"
#include "suites/detection/coco_dataset.h"
#include "suites/detection/transforms.h"

namespace skiff::detection {

struct CocoDetDatasetOptions {
  std::string dataset_dir = ".";
  std::string image_dir;   ///< relative to dataset_dir
  std::string anno_path;   ///< relative to dataset_dir
  bool allow_empty = false;  ///< keep images without (non-crowd) boxes
};

/// The images of a COCO file with their boxes, in file order.
///
/// Labels are contiguous: category ids sorted ascending map to 0..C-1. Boxes
/// are converted to xyxy and clipped to the image size the file gives; boxes
/// left empty (w or h <= 0 after clipping) are dropped. Crowd boxes are kept
/// with is_crowd = 1 (collate_det_batch() leaves them out of the targets).
/// Images without non-crowd boxes are skipped unless allow_empty.
class CocoDetDataset {
 public:
  /// \throws IoError when the annotation file cannot be read or an image file
  /// is missing (naming both); ValueError for invalid COCO data or when no image is left.
  explicit CocoDetDataset(const CocoDetDatasetOptions& options);
  /// From a TrainDataset/EvalDataset section (keys above).
  /// \throws ValueError naming file:line and the key for an unknown key or name.
  explicit CocoDetDataset(const config::Section& section);

  int64_t size() const { return int64_t(records_.size()); }
  /// The record of image `index` (no pixels: Decode reads them). \throws IndexError.
  const DetSample& record(int64_t index) const;
  int num_classes() const { return int(category_ids_.size()); }
  /// COCO category id of each label, and the names.
  const std::vector<int64_t>& category_ids() const { return category_ids_; }
  const std::vector<std::string>& class_names() const { return class_names_; }
  /// Images left out because they had no boxes (allow_empty: false).
  int64_t skipped_empty() const { return skipped_empty_; }
  const CocoDataset& coco() const { return coco_; }
  const std::string& anno_file() const { return anno_file_; }

 private:
  void load(const CocoDetDatasetOptions& options);
  CocoDataset coco_;
  std::string anno_file_;
  std::vector<DetSample> records_;
  std::vector<int64_t> category_ids_;
  std::vector<std::string> class_names_;
  int64_t skipped_empty_ = 0;
};

/// Batches of a dataset through a pipeline, in a deterministic order.
class DetLoader {
 public:
  DetLoader(std::shared_ptr<const CocoDetDataset> dataset, std::shared_ptr<const DetPipeline> pipeline,
            DetReaderSettings settings, uint64_t seed);
  /// Batches per epoch (drop_last drops a short last batch).
  int64_t num_batches() const;
  /// Batch `index` of epoch `epoch`: the order is shuffled per epoch when
  /// `shuffle`, and every random choice comes from a generator seeded by
  /// (seed, epoch, index), so a batch is the same whenever it is asked for.
  DetBatch batch(int64_t epoch, int64_t index) const;

 private:
  std::shared_ptr<const CocoDetDataset> dataset_;
  std::shared_ptr<const DetPipeline> pipeline_;
  DetReaderSettings settings_;
  uint64_t seed_;
};

}  // namespace skiff::detection
