#pragma once
// The small model the serving and C API tests run: y = x W + b for x [batch, 3],
// W = [[1,0],[0,1],[1,1]], b = [10, 20] (so [1, 2, 3] -> [14, 25]).
#include "framework/graph/ir.h"
#include "tests/framework/graph/graph_builder.h"

namespace skiff::serve::testing {

inline graph::Graph affine_graph(bool dynamic_batch = true) {
  return graph::testing::GraphBuilder(13)
      .input("x", {dynamic_batch ? -1 : 1, 3})
      .init("W", from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2}))
      .init("b", from_vector<float>({10, 20}, {2}))
      .node("MatMul", {"x", "W"}, {"xw"})
      .node("Add", {"xw", "b"}, {"y"})
      .output("y")
      .build();
}

}  // namespace skiff::serve::testing
