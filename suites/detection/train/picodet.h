#pragma once
/// \file picodet.h
/// A PicoDet-class detector written with skiff's nn API, in the three parts
/// PaddleDetection names (configs say `PicoDet: {backbone: LCNet, neck: LCPAN,
/// head: PicoHeadV2}`):
///   - Backbone LCNet (PP-LCNet, Cui et al., 2021): a stride-2 stem and stacks of
///     depthwise-separable blocks (depthwise k x k, pointwise 1 x 1, hard-swish),
///     squeeze-and-excitation in the last stack; width scaled by `scale`. Its
///     stride 8, 16 and 32 outputs feed the neck.
///   - Neck LCPAN: a path-aggregation network; 1 x 1 convs bring every level to
///     `out_channels`, a top-down pass (upsample, concat, block) and a bottom-up
///     pass (strided depthwise conv, concat, block), each block a 1 x 1 reduce,
///     a 5 x 5 depthwise conv and a 1 x 1 conv.
///   - Head PicoHeadV2 (generalized focal loss): per level, `feat_convs`
///     depthwise-separable convs and one 1 x 1 conv giving the class logits (C
///     channels) and the distribution logits of the four side distances
///     (4 x (reg_max + 1) channels).
///
/// The inference graph has the layout of NanoDet's (the zoo's nanodet-coco):
/// per stride, class probabilities [N, H*W, C] (after the sigmoid) and box
/// logits [N, H*W, 4 * (reg_max + 1)], so the same GFL decoding serves both.
#include <memory>
#include <vector>

#include "suites/detection/train/dense_detector.h"

namespace skiff::detection {

struct PicoDetOptions {
  int num_classes = 80;
  double backbone_scale = 0.35;     ///< LCNet width multiplier
  int64_t neck_channels = 64;       ///< LCPAN out_channels
  int feat_convs = 2;               ///< head convs per level
  int reg_max = 7;                  ///< distance bins 0..reg_max per side
};

/// The strides of the levels the head predicts on (LCNet stages 3, 4 and 5).
inline const std::vector<int>& picodet_strides() {
  static const std::vector<int> strides = {8, 16, 32};
  return strides;
}

class PicoDet : public DenseDetector {
 public:
  /// \throws ValueError for a non-positive class count, scale, channel count,
  /// conv count or reg_max.
  explicit PicoDet(PicoDetOptions options);
  std::string type_name() const override { return "PicoDet"; }

  /// images [N, 3, H, W], H and W multiples of the largest stride.
  DenseOutputs dense(const Tensor& images) override;
  int reg_max() const override { return options_.reg_max; }
  const std::vector<int>& strides() const override { return picodet_strides(); }
  int num_classes() const override { return options_.num_classes; }

  const PicoDetOptions& options() const { return options_; }

 private:
  class Backbone;
  class Neck;
  class Head;

  PicoDetOptions options_;
  std::shared_ptr<Backbone> backbone_;
  std::shared_ptr<Neck> neck_;
  std::shared_ptr<Head> head_;
};

}  // namespace skiff::detection
