#pragma once
/// \file resample.h
/// Resampling and padding: interpolate (nearest / linear / bilinear), pixel_shuffle
/// and pad (constant / reflect / replicate). Index computations match PyTorch's
/// F.interpolate and F.pad exactly, so models ported from PyTorch give the same
/// numbers. All are differentiable to any order.

#include <cstdint>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

/// Options of interpolate(). Give exactly one of `size` and `scale_factor`.
struct InterpolateOptions {
  /// Output spatial size: [H_out, W_out] for 4-D input, [L_out] for 3-D.
  std::vector<int64_t> size;
  /// Spatial scale factors (one value applies to every spatial dim). The output
  /// size is floor(in * scale), and source indices use 1 / scale like PyTorch
  /// (recompute_scale_factor=False).
  std::vector<double> scale_factor;
  /// "nearest" (any input), "bilinear" (4-D input) or "linear" (3-D input).
  std::string mode = "nearest";
  /// For linear/bilinear: true maps the corner pixels' centres onto each other
  /// (src = dst * (in - 1) / (out - 1)); false maps pixel areas
  /// (src = (dst + 0.5) / scale - 0.5, clamped at 0). Must be false for "nearest".
  bool align_corners = false;
};

/// Resizes the spatial dims of x [N, C, H, W] or [N, C, L].
///
/// nearest: src = min(floor(dst * in / out), in - 1) (computed in float32, as
/// PyTorch does; dst * 1 / scale when scale_factor is given).
/// linear/bilinear: a weighted average of the two (four) neighbours at the
/// source position; float64 inputs compute positions in float64, others in
/// float32. Float dtypes only.
/// \throws ShapeError if x is not 3-D or 4-D or size has the wrong length;
/// ValueError if both or neither of size/scale_factor are given, a size or scale
/// is not positive, the mode is unknown or does not fit x's rank, or
/// align_corners is set with "nearest"; TypeError for non-float x.
Tensor interpolate(const Tensor& x, const InterpolateOptions& options);

/// Pads the trailing dims of x. `pads` is in PyTorch order: (left, right) of the
/// last dim first, then (top, bottom) of the one before, ...; its length is even
/// and at most 2 * x.dim().
///
/// mode "constant" fills with `value` (negative pads crop); "reflect" mirrors
/// without repeating the edge element (pads must be < that dim's size);
/// "replicate" repeats the edge element (the dim must be non-empty). Reflect and
/// replicate need non-negative pads.
/// Any dtype; gradients flow for float inputs.
/// \throws ValueError for an odd or too long pads list, an unknown mode, or pads
/// the mode cannot satisfy (negative reflect/replicate pads, reflect pads >= the
/// dim size, replicate padding of an empty dim, crops larger than the dim).
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode = "constant",
           double value = 0.0);

/// Moves channels into spatial blocks: [N, C*rh*rw, H, W] -> [N, C, H*rh, W*rw] with
/// out[n, c, h*rh + i, w*rw + j] = in[n, (c*rh + i)*rw + j, h, w] (PyTorch's F.pixel_shuffle
/// with a factor per axis; ONNX DepthToSpace in CRD mode when rh == rw). Any dtype;
/// differentiable to any order.
/// \throws ShapeError if x is not 4-D or its channels are not divisible by rh * rw;
/// ValueError for a factor < 1.
Tensor pixel_shuffle(const Tensor& x, int64_t rh, int64_t rw);

}  // namespace skiff
