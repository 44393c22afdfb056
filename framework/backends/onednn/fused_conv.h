#pragma once
/// \file fused_conv.h
/// Contract of the fused float32 kernels the graph engine's fused ops
/// (framework/graph/ops/fused.cpp) call through the kernel registry. The
/// kernels live in framework/backends/onednn/kernels/nn/fused_conv.cpp and are
/// looked up by name with find_kernel(), so the graph module needs no link
/// dependency on the oneDNN backend: when the backend is not built (or is
/// disabled with SKIFF_DISABLE_BACKENDS=onednn) the graph ops fall back to
/// their composite definitions.
///
/// Post-op chain. Both kernels apply, in order, a list of element-wise steps
/// given by three attributes of equal length:
///   "post_kinds" (ints, PostOpKind), "post_alpha" and "post_beta" (floats).
/// The steps are
///   Relu      y = max(x, 0)
///   Clip      y = min(max(x, alpha), beta)
///   HardSwish y = x * min(max(x + 3, 0), 6) / 6
///   Linear    y = alpha * x + beta
///   Logistic  y = 1 / (1 + exp(-x))
///   Swish     y = x / (1 + exp(-alpha * x))
///   Sum       y = x + residual          (fused conv only; at most one, reads input 3)
///
/// Kernel "skiff_fused_conv2d" (CPU, float32):
///   inputs  {x [N, C, H, W] or blocked [N, ceil(C / 16), H, W, 16] (oneDNN nChw16c), weight [O, C / groups, kh, kw], bias [O] or undefined, residual [N, O, oh, ow]
///            (only with a Sum step)}, all contiguous;
///   outputs {y [N, O, oh, ow], or blocked [N, ceil(O / 16), oh, ow, 16] to keep the result in
///            nChw16c for a following fused conv} pre-allocated;
///   attrs   "stride", "padding", "dilation" (two values each), "groups", plus the post-op chain.
///   The weights are reordered into the primitive's layout once and cached (keyed by the weight
///   storage and its version), so the weight tensor must stay unchanged between calls or be
///   modified only through skiff ops (which bump the version).
///   \throws NotImplementedError when oneDNN has no implementation for the geometry; the caller
///   then runs the composite path.
///
/// Kernel "skiff_unblock" (CPU, float32): inputs {x blocked [N, ceil(C / 16), H, W, 16]},
///   outputs {y [N, C, H, W]} pre-allocated: converts nChw16c back to NCHW.
///
/// Kernel "skiff_eltwise_chain" (CPU, float32):
///   inputs {x} contiguous, outputs {y} pre-allocated with x's shape, attrs: the post-op chain
///   (no Sum step).

#include <cstdint>

namespace skiff::onednn {

enum class PostOpKind : int64_t { Relu = 0, Clip = 1, HardSwish = 2, Linear = 3, Logistic = 4, Swish = 5, Sum = 6,
                                      LeakyRelu = 7 };

inline constexpr const char* kFusedConvKernel = "skiff_fused_conv2d";
inline constexpr const char* kEltwiseChainKernel = "skiff_eltwise_chain";
inline constexpr const char* kUnblockKernel = "skiff_unblock";
inline constexpr int64_t kBlock = 16;  ///< channel block of the nChw16c layout

}  // namespace skiff::onednn
