#pragma once
/// \file gfl_loss.h
/// The losses of a generalized-focal-loss detector (PP-PicoDet's PicoHeadV2):
///   - varifocal loss (Zhang et al., VarifocalNet, 2021) on the class logits:
///     binary cross-entropy against an IoU-aware target q, weighted q on the
///     positive class of a positive cell and alpha * p^gamma elsewhere;
///   - GIoU loss (Rezatofighi et al., 2019) on the decoded boxes of positive cells;
///   - distribution focal loss (Li et al., GFL, 2020) on the distance bins:
///     cross-entropy against the two bins around the true distance, weighted by
///     how near each is.
/// The box losses are weighted by each cell's target score and every term is
/// divided by the sum of target scores (at least 1), as PaddleDetection does.
#include <vector>

#include "framework/tensor/tensor.h"
#include "suites/detection/train/assigner.h"
#include "suites/detection/train/picodet.h"

namespace skiff::detection {

/// Sum over all elements of the varifocal loss. logits, target and positive are
/// the same shape; positive is 1 on the class of each positive cell, else 0.
Tensor varifocal_loss(const Tensor& logits, const Tensor& target, const Tensor& positive, double alpha = 0.75,
                      double gamma = 2.0);

/// 1 - GIoU per row of two [P, 4] tensors of boxes [x0, y0, x1, y1]: [P].
Tensor giou_loss(const Tensor& pred, const Tensor& target);

/// Distribution focal loss per row: logits [R, bins], target [R] distances in
/// bins within [0, bins - 1): [R].
Tensor distribution_focal_loss(const Tensor& logits, const Tensor& target);

/// The expected distance of each row of distribution logits [R, bins]: sum_i softmax_i * i, [R].
Tensor expected_distance(const Tensor& logits);

struct GflLossOptions {
  double vfl_weight = 1.0;
  double giou_weight = 2.5;
  double dfl_weight = 0.5;
  TaskAlignedOptions assigner{};
};

struct GflLoss {
  Tensor total;            ///< the weighted sum, a scalar to backpropagate
  double vfl = 0, giou = 0, dfl = 0;  ///< the terms before weighting (for logs)
  int64_t positives = 0;   ///< positive cells in the batch
};

/// The loss of one batch: assigns cells to `truth` (one entry per image) with
/// the task-aligned assigner on the detached predictions, then the three terms.
/// \throws ValueError when truth has not one entry per image.
GflLoss gfl_loss(const DenseOutputs& outputs, const AnchorPoints& anchors, const std::vector<GroundTruth>& truth,
                 int reg_max, const GflLossOptions& options = {});

}  // namespace skiff::detection
