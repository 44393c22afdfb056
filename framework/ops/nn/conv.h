#pragma once
/// \file conv.h
/// Convolution and pooling over NCHW tensors.
///
/// Conventions shared by every function here:
/// - Activations are [N, C, H, W] (conv1d: [N, C, L]); any strides are accepted.
/// - `stride`, `padding`, `dilation`, `output_padding` and pooling `kernel` take one value for
///   both spatial dims ({s}) or one per dim ({sh, sw}). Padding is zero padding on both sides.
/// - Float dtypes only: float32 and float64 run everywhere (float32 uses oneDNN when built in).
///   Inputs must share one dtype; otherwise TypeError.
/// - Output spatial size of a convolution or pooling window:
///     out = floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1
///   (pooling with ceil_mode rounds up, dropping a last window that would start in the padding).
/// - Every function is differentiable w.r.t. its float inputs, to any order for convolutions,
///   average pooling and max pooling (max pooling routes gradients to the recorded argmax).
///
/// Errors: ShapeError for wrong ranks, channel/group mismatches (the message names both shapes)
/// and windows that do not fit; ValueError for non-positive stride/dilation/groups or negative
/// padding; TypeError for non-float or mismatched dtypes.

#include <optional>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

/// 2-D cross-correlation (PyTorch's conv2d).
///   x: [N, C, H, W], weight: [O, C / groups, kh, kw], bias: [O] (optional)
///   returns [N, O, Ho, Wo], y[n, o] = bias[o] + sum_{c in group(o), i, j}
///           x[n, c, ho * sh - ph + i * dh, wo * sw - pw + j * dw] * weight[o, c, i, j]
/// `groups` must divide C and O; groups == C == O is a depthwise convolution.
/// \throws ShapeError if x is not 4-D, weight is not 4-D, C != weight.size(1) * groups,
///         O % groups != 0, bias is not [O], or the (dilated) kernel is larger than the padded input.
Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
              std::vector<int64_t> dilation = {1}, int64_t groups = 1);

/// 1-D cross-correlation: x [N, C, L], weight [O, C / groups, k], bias [O] -> [N, O, Lo].
/// Same rules as conv2d with H = 1 (stride/padding/dilation are single values).
Tensor conv1d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);

/// Transposed 2-D convolution (the gradient of conv2d w.r.t. its input; PyTorch's conv_transpose2d).
///   x: [N, C, H, W], weight: [C, O / groups, kh, kw], bias: [O] (optional) -> [N, O, Ho, Wo] with
///   Ho = (H - 1) * sh - 2 * ph + dh * (kh - 1) + output_padding_h + 1 (likewise Wo).
/// output_padding (extra rows/cols on the bottom/right) must be smaller than the stride.
/// \throws ShapeError on rank/channel mismatches or a non-positive output size; ValueError on a
///         bad output_padding.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
                        std::vector<int64_t> output_padding = {0}, int64_t groups = 1,
                        std::vector<int64_t> dilation = {1});

/// Gradient of conv2d w.r.t. its input: grad_out [N, O, Ho, Wo], weight [O, C / groups, kh, kw]
/// -> [N, C, H, W] where input_size = {N, C, H, W}. Differentiable in both arguments.
/// \throws ShapeError if conv2d of input_size with this weight would not give grad_out's shape.
Tensor conv2d_backward_input(const Tensor& grad_out, const Tensor& weight, const Shape& input_size,
                             std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
                             std::vector<int64_t> dilation = {1}, int64_t groups = 1);

/// Gradient of conv2d w.r.t. its weight: grad_out [N, O, Ho, Wo], x [N, C, H, W]
/// -> [O, C / groups, kh, kw] where weight_size = {O, C / groups, kh, kw}. Differentiable.
Tensor conv2d_backward_weight(const Tensor& grad_out, const Tensor& x, const Shape& weight_size,
                              std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
                              std::vector<int64_t> dilation = {1}, int64_t groups = 1);

/// Max pooling result with the argmax of each window.
struct MaxPoolResult {
  Tensor values;   ///< [N, C, Ho, Wo], x's dtype
  Tensor indices;  ///< [N, C, Ho, Wo] int64: flat position h * W + w of the max inside its [H, W] plane
};

/// 2-D max pooling over windows `kernel` (dilated by `dilation`) moved by `stride` (empty = kernel).
/// Padding counts as -inf. The gradient goes to the first maximum of each window.
/// \throws ShapeError if x is not 4-D (or the window does not fit); ValueError if padding exceeds half
///         the kernel or a size is not positive.
MaxPoolResult max_pool2d_with_indices(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                                      std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
                                      bool ceil_mode = false);
/// max_pool2d_with_indices(...).values.
Tensor max_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                  std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1}, bool ceil_mode = false);

/// 2-D average pooling. With count_include_pad the divisor counts zero padding inside the window
/// (but never the part of a ceil_mode window past the padded input); without it only real inputs.
/// \throws like max_pool2d.
Tensor avg_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                  std::vector<int64_t> padding = {0}, bool ceil_mode = false, bool count_include_pad = true);

/// Adaptive average pooling to output_size {oh, ow} (or {s} for square): output cell i averages
/// input rows [floor(i * H / oh), ceil((i + 1) * H / oh)) (likewise columns), as in PyTorch.
/// \throws ShapeError if x is not 4-D; ValueError if an output size is not positive.
Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> output_size);

/// Mean over H and W: [N, C, H, W] -> [N, C, 1, 1] (adaptive_avg_pool2d to 1 x 1).
Tensor global_avg_pool2d(const Tensor& x);

}  // namespace skiff
