#pragma once
/// \file det_loss.h
/// The DB loss (PaddleOCR DBLoss): total = alpha * L_shrink + beta * L_threshold + L_binary, with
///   - L_shrink: binary cross-entropy on the probability map, balanced by hard
///     negative mining (all positive pixels, the negative_ratio x as many
///     negatives with the largest loss), within shrink_mask;
///   - L_threshold: mean |T - threshold_map| over threshold_mask (MaskL1Loss);
///   - L_binary: dice loss of the binary map against shrink_map within shrink_mask.
/// A model that gives P only (no logits, no threshold map) gets the cross-entropy
/// on P and no L_threshold.
#include <map>
#include <string>

#include "framework/data/dataset.h"
#include "suites/ocr/train/det_model.h"

namespace skiff::ocr {

struct DbLossOptions {
  double alpha = 5;           ///< weight of L_shrink
  double beta = 10;           ///< weight of L_threshold
  double negative_ratio = 3;  ///< ohem_ratio: hard negatives per positive pixel
  double eps = 1e-6;
};

struct DbLossParts {
  Tensor total;  ///< differentiable, 0-d
  double shrink = 0, threshold = 0, binary = 0;
};

/// `batch` holds the DetDataset maps (shrink_map, shrink_mask, threshold_map,
/// threshold_mask: [N, H, W]). \throws ShapeError when the maps and the
/// model's output disagree.
DbLossParts db_loss(const DbMaps& maps, const data::Example& batch, const DbLossOptions& options = {});

}  // namespace skiff::ocr
