#pragma once
/// \file blocked_conv.h
/// Convolutions on nChw16c activations (pointwise, depthwise, and dense ones with at least 16
/// input channels), and post-op chains on their own, as loops compiled ahead of time, for the
/// fused ops' kernels (framework/ops/nn/fused.h, kernels/nn/fused_conv.cpp). oneDNN JIT-compiles a kernel for every geometry it has not
/// seen (batch, height, width); OCR gives each image and each recognition batch new ones, and
/// over 40 mixed images `skiff ocr --threads 2` created about 2,300 pointwise and depthwise
/// kernels: 0.66 s of its 4.9 s, plus most of its system time (each kernel is an mmap, two
/// mprotects and an munmap, and every mprotect interrupts the other core). These loops serve
/// every geometry.
///
/// Layouts: activations are [N, ceil(C / 16), H, W, 16] with zero channel padding; the
/// result keeps its padded channels zero whatever the post-op chain does, as oneDNN does.

#include <cstddef>
#include <vector>

#include "framework/core/cpu_features.h"
#include "framework/ops/nn/conv_params.h"
#include "framework/ops/nn/fused.h"

namespace skiff::onednn {

using ::skiff::PostOpKind;
using ::skiff::PostStep;
inline constexpr int64_t kBlock = kChannelBlock;

enum class BlockedConvKind {
  None,       ///< not served here
  Pointwise,  ///< 1x1 window, stride 1, no padding, one group
  Depthwise,  ///< one filter per channel (groups == C == O), any window, stride and padding
  Dense,      ///< one group, at least 16 input channels, column stride 1 or 2, any window
};
BlockedConvKind blocked_conv_kind(const nn_detail::Conv2dParams& p);

/// Floats in the packed weights of `p` (kind not None): pointwise [ceil(O / 16), C, 16],
/// depthwise [ceil(C / 16), kh * kw, 16], dense [ceil(O / 16), ceil(C / 16), kh * kw, 16, 16]
/// (input channel, then output channel), channels past C and O zero.
size_t blocked_conv_packed_floats(const nn_detail::Conv2dParams& p);
/// Packs OIHW weights `w` of `p` into `packed` (blocked_conv_packed_floats() floats).
void pack_blocked_conv_weights(const nn_detail::Conv2dParams& p, const float* w, float* packed);

struct BlockedConvArgs {
  const float* src = nullptr;       ///< [N, ceil(C / 16), H, W, 16]
  const float* weights = nullptr;   ///< packed by pack_blocked_conv_weights()
  const float* bias = nullptr;      ///< [O], or null
  const float* residual = nullptr;  ///< laid out like dst, read by a Sum step
  float* dst = nullptr;             ///< [N, ceil(O / 16), oh, ow, 16]
};

/// dst = chain(conv(src) + bias), on the OpenMP threads, with the loops compiled for `isa`
/// (active_isa() by default; tests ask for the narrower ones too, which the CPU must have).
void run_blocked_conv(const nn_detail::Conv2dParams& p, const BlockedConvArgs& args,
                      const std::vector<PostStep>& chain, CpuIsa isa = active_isa());

/// dst = chain(src) over `count` floats (dst may be src); the chain has no Sum step.
void run_post_chain(const float* src, float* dst, int64_t count, const std::vector<PostStep>& chain,
                    CpuIsa isa = active_isa());

}  // namespace skiff::onednn
