#pragma once
/// \file resize.h
/// What a Resize / Upsample node asks for, shared by the Resize graph op (nn.cpp) and
/// skiff.ChannelBlocked (fused.cpp), which runs bilinear Resize nodes on channel-blocked values.

#include <cstdint>
#include <vector>

#include "framework/core/shape.h"
#include "framework/graph/op_registry.h"

namespace skiff::graph::ops {

struct ResizeTarget {
  std::vector<int64_t> sizes;  ///< one per dim of the input
  std::vector<double> scales;  ///< sizes[d] / input[d] when the node gave sizes
};

/// The node's output sizes for an input of shape x, from its scales or sizes (inputs by opset,
/// or Upsample's attribute).
/// \throws ValueError naming the node when it gives neither or a count that is not x's rank.
ResizeTarget resize_target(const OpContext& c, const Shape& x);

/// For a linear Resize node: true when its coordinate_transformation_mode maps corners onto
/// corners (align_corners), false for the pixel-area modes (half_pixel, pytorch_half_pixel).
/// \throws ValueError naming the node for the other modes.
bool linear_align_corners(const OpContext& c);

}  // namespace skiff::graph::ops
