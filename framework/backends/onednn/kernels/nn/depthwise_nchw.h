#pragma once
/// \file depthwise_nchw.h
/// Depthwise convolution (one filter per channel) computed directly on NCHW
/// float32 tensors, for the forward pass of the oneDNN backend's conv2d kernel.
///
/// Why not oneDNN: its depthwise kernels need channel-blocked layouts, and for
/// NCHW tensors the two reorders (input in, output back) move twice the bytes
/// of the convolution itself, which at 9 multiply-adds per output is
/// memory-bound. Planes are independent, so this loops over (n, c) planes on
/// the OpenMP threads and keeps each plane's rows in L1.
#include "framework/ops/nn/conv_params.h"

namespace skiff::onednn_detail {

/// Depthwise (groups == channels == outputs), stride 1, dilation 1, any kernel
/// size and padding (the output window never reads past the padding).
bool depthwise_nchw_applies(const nn_detail::Conv2dParams& p);

/// y[n, c] = b[c] + x[n, c] (*) w[c] with zero padding. x, w, y contiguous;
/// b may be null.
void depthwise_nchw_forward(const nn_detail::Conv2dParams& p, const float* x, const float* w, const float* b,
                            float* y);

}  // namespace skiff::onednn_detail
