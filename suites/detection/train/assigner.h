#pragma once
/// \file assigner.h
/// Which cells of a dense detector learn which object: the task-aligned
/// assigner of TOOD (Feng et al., 2021), as PP-PicoDet and PP-YOLOE train with.
///
/// For ground truth j and cell i, with s the predicted probability of j's class
/// at i and u the IoU of i's predicted box with j's box, the alignment metric
/// is t = s^alpha * u^beta. Each object takes the `topk` cells with the largest
/// t among the cells whose centre lies inside its box (ties go to the cell
/// nearer the box centre, which matters at the start of training, when every t
/// is about zero). A cell claimed by several objects keeps the one its box
/// overlaps most. A positive cell's target score is t normalised per object so
/// that the object's best cell scores the object's best IoU:
///   target = t / max_t(j) * max_u(j).
#include <cstdint>
#include <span>
#include <vector>

#include "suites/detection/boxes.h"

namespace skiff::detection {

struct TaskAlignedOptions {
  int topk = 13;
  double alpha = 1.0;  ///< weight of the class score in the metric
  double beta = 6.0;   ///< weight of the IoU in the metric
};

/// The objects of one image (crowd regions left out).
struct GroundTruth {
  std::vector<Box> boxes;
  std::vector<int> labels;  ///< contiguous class indices 0..C-1
};

struct CellAssignment {
  std::vector<int> object;   ///< per cell: the object it learns, or -1 for background
  std::vector<float> score;  ///< per cell: the target score of that object's class (0 for background)
  int positives() const;
};

/// Assigns the cells of one image. `probs` [cells, classes] are the predicted
/// class probabilities and `pred_boxes` [cells] the predicted boxes, both
/// treated as constants; `cx`, `cy` the cell centres.
/// \throws ValueError when the sizes disagree or a label is out of range.
CellAssignment assign_task_aligned(std::span<const float> probs, int num_classes, std::span<const Box> pred_boxes,
                                   std::span<const float> cx, std::span<const float> cy, const GroundTruth& truth,
                                   const TaskAlignedOptions& options = {});

}  // namespace skiff::detection
