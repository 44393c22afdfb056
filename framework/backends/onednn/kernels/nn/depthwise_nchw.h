#pragma once
/// \file depthwise_nchw.h
/// Depthwise convolution (one filter per channel) computed directly on NCHW
/// float32 tensors, for the oneDNN backend's conv2d forward and weight-gradient
/// kernels.
///
/// Why not oneDNN: its depthwise kernels need channel-blocked layouts, and for
/// NCHW tensors the two reorders (input in, output back) move twice the bytes
/// of the convolution itself, which at 9 multiply-adds per output is
/// memory-bound. For the weight gradient of windows larger than 3 x 3 (PicoDet's
/// 5 x 5 depthwise layers) oneDNN 2.6 has no depthwise kernel at all and falls
/// back to im2col + GEMM, 10-100x slower than these loops. Planes are independent, so this loops over (n, c) planes on
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

/// Depthwise, dilation 1, any stride, kernel size and padding (padding smaller
/// than the window).
bool depthwise_nchw_backward_weight_applies(const nn_detail::Conv2dParams& p);

/// gw[c] = sum over n of gy[n, c] correlated with the zero-padded x[n, c] (the
/// weight gradient of depthwise_nchw_forward, or of any strided depthwise
/// convolution). gy, x, gw contiguous. Threads split the channels, each summing
/// its channel's images in order, so the result does not depend on the thread count.
void depthwise_nchw_backward_weight(const nn_detail::Conv2dParams& p, const float* gy, const float* x, float* gw);

}  // namespace skiff::onednn_detail
