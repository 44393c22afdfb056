#pragma once
/// \file fused.h
/// The post-op chains of the fused graph ops ("skiff.FusedConv", "skiff.Eltwise"),
/// shared by the ops (framework/graph/ops/fused.cpp) and the passes that create
/// them (framework/graph/fusion.cpp).
///
/// A chain is stored on the node as three attributes of equal length:
/// "post_ops" (strings), "post_alpha" and "post_beta" (floats). Steps:
///   relu                 y = max(x, 0)
///   leaky_relu (a)       y = x >= 0 ? x : alpha * x
///   clip (lo, hi)        y = min(max(x, alpha), beta)
///   hardswish            y = x * min(max(x + 3, 0), 6) / 6
///   linear (a, b)        y = alpha * x + beta
///   sigmoid              y = 1 / (1 + exp(-x))
///   swish (a)            y = x * sigmoid(alpha * x)
///   sum                  y = x + residual (input 3 of skiff.FusedConv)

#include <string>
#include <vector>

#include "framework/graph/ir.h"

namespace skiff::graph {

struct PostOp {
  std::string name;
  float alpha = 0.f;
  float beta = 0.f;
};

/// The chain stored on a fused node (empty if it has none).
/// \throws ValueError naming the node when the three attributes disagree in length.
std::vector<PostOp> post_ops_of(const Node& node);
/// Stores `ops` as the node's chain, replacing any previous one.
void set_post_ops(Node& node, const std::vector<PostOp>& ops);
/// Applies one step with skiff ops (the reference definition). `residual` is read by "sum" only.
Tensor apply_post_op(const PostOp& op, const Tensor& y, const Tensor& residual);
/// A 0-d tensor holding v, in like's dtype when that is floating point (else float32).
Tensor scalar_tensor(float v, const Tensor& like);

}  // namespace skiff::graph
