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
};

/// Dims for oneDNN (grouped weights as [g, o/g, c/g, kh, kw], dilation as oneDNN's
/// "extra gap" convention, right padding that makes oneDNN's output-size formula give
/// (oh, ow)); nullopt when that right padding would be negative.
inline std::optional<ConvDims> conv_dims(const nn_detail::Conv2dParams& p) {
  using dims = dnnl::memory::dims;
  ConvDims d;
  d.src = {p.n, p.c, p.h, p.w};
  d.dst = {p.n, p.o, p.oh, p.ow};
  d.wei = p.groups > 1 ? dims{p.groups, p.o / p.groups, p.c / p.groups, p.kh, p.kw} : dims{p.o, p.c, p.kh, p.kw};
  d.strides = {p.sh, p.sw};
  d.dilates = {p.dh - 1, p.dw - 1};
  d.pad_l = {p.ph, p.pw};
  d.pad_r = {(p.oh - 1) * p.sh + (p.kh - 1) * p.dh + 1 - p.h - p.ph,
             (p.ow - 1) * p.sw + (p.kw - 1) * p.dw + 1 - p.w - p.pw};
  if (d.pad_r[0] < 0 || d.pad_r[1] < 0) return std::nullopt;
  return d;
}

}  // namespace skiff::onednn_detail
