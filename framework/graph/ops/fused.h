#pragma once
/// \file fused.h
/// The post-op chains of the fused graph ops ("skiff.FusedConv", "skiff.Eltwise"),
/// shared by the ops (framework/graph/ops/fused.cpp) and the passes that create
/// them (framework/graph/fusion.cpp). The ops run the fused ops of
/// framework/ops/nn/fused.h, whose PostStep kinds these names map to.
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
#include "framework/ops/nn/fused.h"

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
/// The chain stored on a fused node as the fused ops' steps.
/// \throws ValueError naming the node for an unknown step name.
std::vector<PostStep> post_steps_of(const Node& node);

/// skiff.ChannelBlocked (framework/graph/ops/fused.cpp): how many leading inputs of a node whose
/// own op type is `inner` may be channel-blocked: 2 for Add, else 1.
size_t channel_blocked_data_inputs(const std::string& inner);

}  // namespace skiff::graph
