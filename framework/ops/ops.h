#pragma once
/// \file ops.h
/// Umbrella header: the whole functional op API.

#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"
#include "framework/ops/op.h"
#include "framework/ops/index/index.h"
#include "framework/ops/linalg/linalg.h"
#include "framework/ops/loss/loss.h"
#include "framework/ops/nn/nn.h"
#include "framework/ops/fft/complex.h"
#include "framework/ops/fft/fft.h"
