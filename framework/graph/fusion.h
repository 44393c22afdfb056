#pragma once
/// \file fusion.h
/// Pattern fusion passes: rewrite chains of small element-wise nodes into the
/// fused ops of framework/graph/ops/fused.h ("skiff.FusedConv", "skiff.Eltwise",
/// "skiff.ChannelMul"), so a convolution and its activation run as one oneDNN
/// primitive and an activation chain makes one pass over memory. Every pass
/// keeps the graph's outputs unchanged within float rounding, never rewrites a
/// value that is a graph output or has consumers outside the pattern, and only
/// fuses convolutions whose weights and bias are constants (initializers).
/// Each returns the number of rewrites. graph::optimize runs them at level 2, in
/// the order of fuse_all().
///
/// The fused ops are skiff extensions (op_type "skiff.*"): the ONNX exporter
/// refuses them, so export a graph optimised at level 1 at most.

#include <cstddef>

#include "framework/graph/ir.h"

namespace skiff::graph {

/// Folds a Mul, Add, Sub or Div by a constant that is a scalar or per output
/// channel ([O, 1, 1] / [1, O, 1, 1]) into the weights and bias of the Conv
/// (constant weights, output used once) that produces its other input. For
/// ConvTranspose with group 1 it folds Mul, Add and BatchNormalization.
size_t fold_conv_affine(Graph& g);

/// Recognises activation patterns and rewrites each into one "skiff.Eltwise"
/// node, appending to the chain of the skiff.Eltwise node producing its input
/// when that is the input's only consumer:
///   Relu, Sigmoid, HardSigmoid, HardSwish, Clip with constant bounds;
///   x * clip(x + 3, 0, 6) / 6 (or * 1/6) and x * HardSigmoid(x; 1/6, 1/2) -> hardswish;
///   x * Sigmoid(x) and x * Sigmoid(a * x) -> swish(a);
///   Mul/Add/Sub/Div by a scalar constant -> linear, only appended to an existing chain.
size_t fuse_activations(Graph& g);

/// Merges a skiff.Eltwise whose input is the only use of a 2-D Conv's (or
/// skiff.FusedConv's) output into that conv as post-ops ("skiff.FusedConv").
size_t fuse_conv_activation(Graph& g);

/// Rewrites Add(conv_out, r), where conv_out is the only use of a 2-D Conv's or
/// skiff.FusedConv's output and r is any other value, into the conv with a
/// "sum" post-op reading r. The fused node takes the Add's place in the order.
size_t fuse_conv_residual(Graph& g);

/// Rewrites Mul(x, s) of two computed values, where s comes from a gate
/// (Conv, skiff.FusedConv, skiff.Eltwise, Sigmoid, HardSigmoid), into
/// "skiff.ChannelMul", and Add(x, ChannelMul(x, s)) into one ChannelMul with
/// residual=1. At run time the op takes a fast path when s is [N or 1, C, 1, 1]
/// and x is [N, C, H, W] float32, else the broadcasting Mul/Add.
size_t fuse_channel_mul(Graph& g);

/// Rewrites nearest Resize nodes (opset >= 11) into "skiff.UpsampleNearest"
/// (same inputs and attributes; a direct loop for integer factors with
/// asymmetric/floor coordinates, the Resize op otherwise) and folds a following
/// Add(r, resized), whose resized operand has no other use, into it as input 4.
size_t fuse_upsample_add(Graph& g);

/// Rewrites every remaining 2-D Conv with constant float32 weights into a
/// skiff.FusedConv with an empty chain, so it too reuses weights reordered once
/// and can exchange blocked activations with its neighbours.
size_t use_fused_convs(Graph& g);

/// Rewrites the spelled-out layer norm over the last axis
///   m = ReduceMean(x, [-1]); d = x - m; v = ReduceMean(d ** 2, [-1]);
///   y = d / Sqrt(v + eps) [* gamma [+ beta]]
/// (float32 constant eps and exponent; constant gamma and beta broadcasting
/// along the last axis only; no intermediate used elsewhere) into one
/// "skiff.LayerNorm" node with inputs {x, gamma or "", beta or ""} and
/// attribute epsilon.
size_t fuse_layer_norm(Graph& g);

/// One topological sweep that lets channel-blocked values flow past the ops between
/// convolutions. Rewrites
///  - each Concat along axis 1 whose inputs all have a channel count known from the
///    graph (fused convs, channel concats, the nodes below) that is a multiple of 16
///    (oneDNN's channel block) into "skiff.ChannelConcat" (same inputs, axis 1, attribute
///    "channels": the inputs' channel counts), which concatenates NCHW tensors like Concat
///    and blocked ones block by block (the CSP blocks of detectors such as NanoDet);
///  - each MaxPool (2-D), linear Resize, Add (both inputs with the same known channel
///    count) and Shape whose data inputs have a known channel count into
///    "skiff.ChannelBlocked" (attribute "inner": the op type; "channels"), which runs on
///    blocked inputs where it can and on NCHW ones otherwise (the feature pyramids of
///    detectors: pool, upsample, add).
size_t use_channel_blocked_ops(Graph& g);

/// Marks each skiff.FusedConv, skiff.ChannelConcat and skiff.ChannelBlocked (not Shape)
/// whose output is read only by consumers that accept a blocked value (fused convs as
/// their input 0 or residual, channel concats, skiff.ChannelBlocked data inputs) with
/// dst_blocked=1: when it runs on oneDNN a conv then leaves its result in oneDNN's
/// channel-blocked layout (nChw16c, a [N, ceil(C / 16), H, W, 16] tensor) and the next
/// conv reads it without the two reorders through NCHW; the other ops keep a blocked
/// input blocked. Values that are graph outputs or reach any other op stay NCHW. A fused
/// conv that takes its composite path produces NCHW, and every consumer accepts either,
/// so correctness never depends on the backend.
size_t select_blocked_layouts(Graph& g);

/// All of the above in order; returns the total number of rewrites.
size_t fuse_all(Graph& g);

}  // namespace skiff::graph
