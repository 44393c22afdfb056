#pragma once
/// \file nn.h
/// Neural-network ops: convolution and pooling (conv.h), normalization, softmax and
/// dropout (norm.h), interpolation and padding (resample.h), and the fused inference ops the
/// graph engine builds (fused.h).

#include "framework/ops/nn/conv.h"
#include "framework/ops/nn/fused.h"
#include "framework/ops/nn/norm.h"
#include "framework/ops/nn/resample.h"
