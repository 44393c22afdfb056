#pragma once
/// \file common.h
/// Helpers shared by the graph op implementations (framework/graph/ops/*.cpp).

#include <cstdint>
#include <vector>

#include "framework/graph/op_registry.h"
#include "framework/ops/ops.h"

namespace skiff::graph::ops {

/// Normalises a possibly negative axis against rank, naming the node on error.
inline int64_t axis_of(const OpContext& ctx, int64_t axis, int64_t rank) {
  SKIFF_CHECK_INDEX(axis >= -rank && axis < rank, "{}: axis {} is out of range for rank {}", ctx.node.describe(), axis,
                    rank);
  return axis < 0 ? axis + rank : axis;
}

/// An attribute that moved to an input in a later opset (axes, pads, split...):
/// the input when present, else the attribute, else `fallback`.
inline std::vector<int64_t> ints_attr_or_input(const OpContext& ctx, const char* attr, size_t input,
                                               std::vector<int64_t> fallback = {}) {
  if (ctx.has(input)) return ctx.ints(input);
  return ctx.node.attr_ints(attr, std::move(fallback));
}

inline std::vector<int64_t> shape_vec(const Tensor& t) { return std::vector<int64_t>(t.shape().begin(), t.shape().end()); }

inline std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

}  // namespace skiff::graph::ops
