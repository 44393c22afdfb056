#pragma once
/// \file conv_dims.h
/// oneDNN memory dims of a 2-D convolution, shared by the plain (conv.cpp) and
/// fused (fused_conv.cpp) convolution kernels.

#include <dnnl.hpp>

#include <optional>

#include "framework/ops/nn/conv_params.h"

namespace skiff::onednn_detail {

struct ConvDims {
  dnnl::memory::dims src, dst, wei, strides, dilates, pad_l, pad_r;
  /// Strides of the full NCHW input; with `cropped`, src is its top-left part.
  dnnl::memory::dims src_strides;
  bool cropped = false;
};

/// Dims for oneDNN (grouped weights as [g, o/g, c/g, kh, kw], dilation as oneDNN's
/// "extra gap" convention, right padding that makes oneDNN's output-size formula give
/// (oh, ow)). When the windows stop short of the bottom or right edge (e.g. a 1x1
/// stride-2 window on an even size), that right padding would be negative, which
/// oneDNN rejects: with `allow_crop` the input is then cropped to the rows and columns
/// the windows read (src smaller than the tensor, src_strides those of the tensor),
/// otherwise the result is nullopt.
inline std::optional<ConvDims> conv_dims(const nn_detail::Conv2dParams& p, bool allow_crop = false) {
  using dims = dnnl::memory::dims;
  ConvDims d;
  d.src = {p.n, p.c, p.h, p.w};
  d.src_strides = {p.c * p.h * p.w, p.h * p.w, p.w, 1};
  d.dst = {p.n, p.o, p.oh, p.ow};
  d.wei = p.groups > 1 ? dims{p.groups, p.o / p.groups, p.c / p.groups, p.kh, p.kw} : dims{p.o, p.c, p.kh, p.kw};
  d.strides = {p.sh, p.sw};
  d.dilates = {p.dh - 1, p.dw - 1};
  d.pad_l = {p.ph, p.pw};
  d.pad_r = {(p.oh - 1) * p.sh + (p.kh - 1) * p.dh + 1 - p.h - p.ph,
             (p.ow - 1) * p.sw + (p.kw - 1) * p.dw + 1 - p.w - p.pw};
  for (size_t i = 0; i < 2; ++i) {
    if (d.pad_r[i] >= 0) continue;
    if (!allow_crop || d.src[2 + i] + d.pad_r[i] < 1) return std::nullopt;
    d.src[2 + i] += d.pad_r[i];
    d.pad_r[i] = 0;
    d.cropped = true;
  }
  return d;
}

}  // namespace skiff::onednn_detail
