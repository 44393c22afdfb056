#pragma once
/// \file passes.h
/// Graph rewrites that keep a graph's outputs unchanged (within float
/// rounding) and make it cheaper to run. Each returns how many nodes it
/// changed or removed, so callers and tests can see it did something.

#include <cstddef>

#include "framework/graph/ir.h"

namespace skiff::graph {

/// Runs every node whose inputs are all constants (initializers) once, at
/// optimisation time, and replaces it by initializers holding its outputs.
/// Constant nodes become initializers too.
size_t fold_constants(Graph& g);

/// Removes nodes whose outputs reach no graph output, and unused initializers.
size_t eliminate_dead_nodes(Graph& g);

/// Removes Identity nodes and inference-mode Dropout by renaming their
/// consumers' inputs (a graph output keeps its name).
size_t remove_identities(Graph& g);

/// Folds BatchNormalization (and a Mul/Add by a per-channel constant) that
/// directly follows a Conv with constant weights into the conv's weights and
/// bias, when the conv output has no other consumer.
size_t fold_batch_norm_into_conv(Graph& g);

/// Removes Transpose nodes that cancel: a Transpose followed (through single-use
/// element-wise nodes whose other inputs are constants) only by Transposes that
/// undo it disappears with them, the constants being permuted to match; two
/// Transposes in a row become one. Layout conversions (TF.js / tf2onnx models
/// wrap each NHWC convolution in a pair) leave such pairs. Constants are only
/// permuted, so results change at most by the rounding of vectorised kernels.
size_t sink_transposes(Graph& g);

/// Folds a constant-mode Pad of the spatial dims into the Conv (value 0) or
/// MaxPool (value -inf) that reads it, adding to the op's explicit pads, when
/// that op is its only reader. TF.js / TensorFlow models pad explicitly before
/// VALID convolutions and pools.
size_t fold_pad_into_conv(Graph& g);

struct OptimizeOptions {
  int level = 2;  ///< 0: none; 1: folding and clean-up; 2: also conv folding
};

/// The default pipeline, run by the Predictor. Returns the number of rewrites.
size_t optimize(Graph& g, const OptimizeOptions& options = {});

}  // namespace skiff::graph
