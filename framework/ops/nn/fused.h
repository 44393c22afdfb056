#pragma once
/// \file fused.h
/// Fused inference ops: what the graph engine's fusion passes (framework/graph/fusion.h) turn
/// chains of ONNX nodes into, declared as ordinary ops so that the graph holds no kernels. Each
/// has a reference CPU kernel written with other skiff ops (float32 and float64) in
/// framework/backends/cpu/kernels/nn/fused.cpp, and fast float32 kernels registered beside it:
/// oneDNN primitives and the blocked_conv loops for fused_conv2d / eltwise_chain /
/// unblock_channels (framework/backends/onednn), plain loops for channel_mul and
/// upsample_nearest2d (CPU backend). None is differentiable (they run inference graphs) or
/// exportable (the passes build them from exportable nodes).
///
/// Post-op chains. fused_conv2d and eltwise_chain apply, in order, element-wise steps:
///   Relu      y = max(x, 0)
///   LeakyRelu y = x >= 0 ? x : alpha * x
///   Clip      y = min(max(x, alpha), beta)
///   HardSwish y = x * min(max(x + 3, 0), 6) / 6
///   Linear    y = alpha * x + beta
///   Logistic  y = 1 / (1 + exp(-x))
///   Swish     y = x / (1 + exp(-alpha * x))
///   Sum       y = x + residual   (fused_conv2d only, at most once)
/// stored in the op's attributes as "post_kinds" (ints), "post_alpha" and "post_beta" (floats).
///
/// Channel-blocked activations. fused_conv2d may read and write [N, C, H, W] activations in the
/// channel-blocked layout [N, ceil(C / 16), H, W, 16] (oneDNN's nChw16c; the channels past C are
/// zero), so a chain of convolutions skips the reorders between them. unblock_channels turns one
/// back into NCHW. Every kernel accepts blocked values, the reference included, so results never
/// depend on which backend is built; whether the graph asks for them is the fast kernel's call
/// (fused_conv2d_prefers_blocked()).

#include <cstdint>
#include <vector>

#include "framework/ops/op.h"

namespace skiff {

enum class PostOpKind : int64_t {
  Relu = 0,
  Clip = 1,
  HardSwish = 2,
  Linear = 3,
  Logistic = 4,
  Swish = 5,
  Sum = 6,
  LeakyRelu = 7,
};

/// One step of a post-op chain.
struct PostStep {
  PostOpKind kind = PostOpKind::Relu;
  float alpha = 0.f;
  float beta = 0.f;
};

/// Channels per block of the channel-blocked layout.
inline constexpr int64_t kChannelBlock = 16;

struct FusedConv2dOptions {
  std::vector<int64_t> stride{1, 1};
  std::vector<int64_t> padding{0, 0};  ///< symmetric: {top = bottom, left = right}
  std::vector<int64_t> dilation{1, 1};
  int64_t groups = 1;
  std::vector<PostStep> post_ops;
  bool blocked_output = false;  ///< write [N, ceil(O / 16), oh, ow, 16]
};

/// post_ops(conv2d(x, weight, bias)), where x is [N, C, H, W] or channel-blocked and bias may be
/// undefined. `residual` ([N, O, oh, ow], NCHW or channel-blocked) is read by a Sum step and must
/// be defined exactly when the chain has one.
/// \throws ShapeError / TypeError / ValueError naming fused_conv2d on inconsistent arguments.
Tensor fused_conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& residual,
                    const FusedConv2dOptions& options);

/// The chain applied to x element by element (no Sum step).
Tensor eltwise_chain(const Tensor& x, const std::vector<PostStep>& chain);

/// A channel-blocked [N, ceil(C / 16), H, W, 16] activation holding `channels` channels, as NCHW.
Tensor unblock_channels(const Tensor& x, int64_t channels);

/// x [N, C, H, W] in the channel-blocked layout (zero padded to whole blocks). Written with view
/// ops, not an op of its own: the graph never needs it (convs write blocked values directly); the
/// reference kernels and tests do.
Tensor to_channel_blocked(const Tensor& x);

/// x * scale, plus x when add_input: scale is [N or 1, C, 1, 1] for x [N, C, H, W] (a squeeze-
/// and-excitation gate).
Tensor channel_mul(const Tensor& x, const Tensor& scale, bool add_input);

/// Nearest upsampling of x [N, C, H, W] by whole factors (y[.., i, j] = x[.., i / fh, j / fw]),
/// plus `residual` [N, C, H * fh, W * fw] when it is defined (a feature-pyramid merge).
Tensor upsample_nearest2d(const Tensor& x, int64_t fh, int64_t fw, const Tensor& residual = Tensor());

/// max_pool2d() of a channel-blocked activation x [N, B, H, W, 16], each of the 16 lanes pooled on
/// its own (so channels past the real ones stay zero); the result is channel-blocked too,
/// [N, B, oh, ow, 16]. Arguments as max_pool2d's (padding counts as -inf).
/// \throws ShapeError if x is not channel-blocked or the window does not fit; ValueError like
///         max_pool2d.
Tensor max_pool2d_blocked(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                          std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
                          bool ceil_mode = false);

/// interpolate() in mode "bilinear" to size {oh, ow} of a channel-blocked activation x
/// [N, B, H, W, 16]: the same source positions and weights per lane, the result [N, B, oh, ow, 16].
/// \throws ShapeError if x is not channel-blocked; ValueError for sizes that are not positive.
Tensor resize_bilinear_blocked(const Tensor& x, int64_t oh, int64_t ow, bool align_corners);

/// Whether the kernel that runs float32 fused_conv2d on the CPU prefers channel-blocked
/// activations (a fast backend's kernel does; the reference kernel, all that runs when oneDNN is
/// not built or disabled, gains nothing from them).
bool fused_conv2d_prefers_blocked();

namespace nn_detail {

/// Stores a chain as the three post-op attributes.
Attrs& set_post_chain(Attrs& a, const std::vector<PostStep>& chain);
/// The chain stored in a fused op's attributes (empty when it has none).
/// \throws ValueError naming `op` when the attributes disagree in length or name no step.
std::vector<PostStep> post_chain(const Attrs& a, const char* op);
/// One step written with skiff ops (the reference definition); `residual` is read by Sum only.
Tensor apply_post_step(const PostStep& step, const Tensor& y, const Tensor& residual);

}  // namespace nn_detail
}  // namespace skiff
