#pragma once
/// \file dense_detector.h
/// What the detection recipes train, evaluate and export: a dense GFL-head
/// detector giving, for every cell of every level, class logits and the
/// distribution logits of the four side distances. PicoDet (picodet.h, built from
/// the recipe) and the imported NanoDet (pretrained_gfl.h, fine-tuned) are two.
#include <string>
#include <vector>

#include "framework/graph/ir.h"
#include "framework/nn/nn.h"

namespace skiff::detection {

/// The head's outputs for a batch, every level concatenated (level by level,
/// cells in row-major order within a level).
struct DenseOutputs {
  Tensor cls_logits;  ///< [N, A, C]
  Tensor reg_logits;  ///< [N, A, 4 * (reg_max + 1)]
  std::vector<int64_t> level_heights, level_widths;  ///< the grid of each level
};

/// The cell centres of all levels, in DenseOutputs order: ((col + 0.5) * s, (row + 0.5) * s).
struct AnchorPoints {
  std::vector<float> cx, cy, stride;
  int64_t size() const { return int64_t(cx.size()); }
};
AnchorPoints anchor_points(const std::vector<int64_t>& heights, const std::vector<int64_t>& widths,
                           const std::vector<int>& strides);

/// DenseOutputs from each level's head map [N, classes + 4 bins, H, W] (class channels first).
DenseOutputs dense_outputs(const std::vector<Tensor>& level_maps, int64_t classes, int64_t bins);

class DenseDetector : public nn::Module {
 public:
  /// images [N, 3, H, W], H and W multiples of the largest stride.
  virtual DenseOutputs dense(const Tensor& images) = 0;
  /// Distance bins per side minus one.
  virtual int reg_max() const = 0;
  /// The stride of each level, in DenseOutputs order.
  virtual const std::vector<int>& strides() const = 0;
  virtual int num_classes() const = 0;

  /// The class logits [N, A, C] (Module's single-output form).
  Tensor forward(const Tensor& images) override { return dense(images).cls_logits; }

  /// The inference graph in NanoDet's layout (what `skiff det` decodes): input
  /// [batch, 3, height, width] -> per stride probabilities [batch, cells, C] and box
  /// logits [batch, cells, 4 (reg_max + 1)], outputs named cls_<stride> and
  /// reg_<stride>; `height` x `width` is the example size.
  graph::Graph inference_graph(int height, int width);
};

}  // namespace skiff::detection
