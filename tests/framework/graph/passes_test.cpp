// Each optimisation pass on its own: it must rewrite what it targets and leave
// the graph's outputs unchanged.
#include <gtest/gtest.h>

#include <limits>

#include "framework/engine/predictor.h"
#include "framework/graph/passes.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "tests/framework/graph/graph_builder.h"

namespace skiff::graph {
namespace {

using testing::GraphBuilder;

Tensor run_unoptimized(const Graph& g, const Tensor& x) { return engine::Predictor(g, {0}).run(std::vector<Tensor>{x})[0]; }

double max_diff(const Tensor& a, const Tensor& b) { return amax(abs(sub(a, b))).item<double>(); }

size_t count_ops(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op;
  return n;
}

Graph conv_bn_graph(bool with_bias) {
  Generator gen(11);
  GraphBuilder b(13);
  b.input("x", {-1, 3, -1, -1})
      .init("w", randn({8, 3, 3, 3}, DType::Float32, &gen))
      .init("gamma", rand({8}, DType::Float32, &gen, 0.5, 1.5))
      .init("beta", randn({8}, DType::Float32, &gen))
      .init("mean", randn({8}, DType::Float32, &gen))
      .init("var", rand({8}, DType::Float32, &gen, 0.1, 2.0));
  std::vector<std::string> conv_in{"x", "w"};
  if (with_bias) {
    b.init("b", randn({8}, DType::Float32, &gen));
    conv_in.push_back("b");
  }
  return b.node("Conv", conv_in, {"c"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})
      .node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, {{"epsilon", 1e-3f}})
      .node("Relu", {"bn"}, {"y"})
      .output("y")
      .build();
}

TEST(GraphPasses, BatchNormFoldsIntoConvWithAndWithoutBias) {
  Generator gen(2);
  Tensor x = randn({2, 3, 9, 7}, DType::Float32, &gen);
  for (bool bias : {false, true}) {
    Graph g = conv_bn_graph(bias);
    Tensor before = run_unoptimized(g, x);
    EXPECT_EQ(fold_batch_norm_into_conv(g), 1u);
    EXPECT_EQ(count_ops(g, "BatchNormalization"), 0u);
    EXPECT_EQ(g.nodes.size(), 2u);
    g.validate();
    EXPECT_LT(max_diff(before, run_unoptimized(g, x)), 1e-4);
  }
}

TEST(GraphPasses, BatchNormNotFoldedWhenConvOutputIsShared) {
  Graph g = conv_bn_graph(true);
  // A second reader of the conv output keeps the conv unchanged.
  g.nodes.push_back(Node{"other", "Relu", "", {"c"}, {"z"}, {}});
  g.outputs.push_back({"z", DType::Float32, false, {}});
  EXPECT_EQ(fold_batch_norm_into_conv(g), 0u);
}

TEST(GraphPasses, ConstantFoldingRunsConstantSubgraphs) {
  Graph g = GraphBuilder(13)
                .input("x", {-1, 4})
                .node("Constant", {}, {"two"}, {{"value", full({1}, 2.0)}})
                .init("a", from_vector<float>({1, 2, 3, 4}))
                .node("Mul", {"a", "two"}, {"a2"})
                .node("Sqrt", {"a2"}, {"s"})
                .node("Add", {"x", "s"}, {"y"})
                .output("y")
                .build();
  Generator gen(5);
  Tensor x = randn({3, 4}, DType::Float32, &gen);
  Tensor before = run_unoptimized(g, x);
  EXPECT_EQ(fold_constants(g), 3u);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Add");
  EXPECT_LT(max_diff(before, run_unoptimized(g, x)), 1e-6);
}

TEST(GraphPasses, DeadNodesAndUnusedInitializersAreRemoved) {
  Graph g = GraphBuilder(13)
                .input("x", {2})
                .init("unused", zeros({100}))
                .node("Relu", {"x"}, {"y"})
                .node("Exp", {"x"}, {"dead"})
                .node("Neg", {"dead"}, {"dead2"})
                .output("y")
                .build();
  EXPECT_EQ(eliminate_dead_nodes(g), 2u);
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_FALSE(g.is_initializer("unused"));
}

TEST(GraphPasses, IdentitiesAreBypassedButOutputsKeepTheirNames) {
  Graph g = GraphBuilder(13)
                .input("x", {2})
                .node("Identity", {"x"}, {"i1"})
                .node("Relu", {"i1"}, {"r"})
                .node("Dropout", {"r"}, {"y"})
                .output("y")
                .build();
  Tensor x = from_vector<float>({-1, 2});
  Tensor before = run_unoptimized(g, x);
  EXPECT_EQ(remove_identities(g), 1u);  // the Dropout producing the graph output stays
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
  EXPECT_EQ(max_diff(before, run_unoptimized(g, x)), 0.0);
}

// NHWC -> NCHW -> op -> back, as TF.js and tf2onnx models spell a convolution's neighbours.
TEST(GraphPasses, TransposesThatCancelAreRemovedThroughElementwiseOps) {
  Generator gen(5);
  const std::vector<int64_t> to_nhwc{0, 2, 3, 1}, to_nchw{0, 3, 1, 2};
  Graph g = GraphBuilder(13)
                .input("x", {2, 3, 4, 5})
                .init("bias", randn({3}, DType::Float32, &gen))  // per channel, on NHWC's last axis
                .node("Transpose", {"x"}, {"t1"}, {{"perm", to_nhwc}})
                .node("Add", {"t1", "bias"}, {"a"})
                .node("LeakyRelu", {"a"}, {"r"}, {{"alpha", 0.1f}})
                .node("Transpose", {"r"}, {"back"}, {{"perm", to_nchw}})
                .node("Transpose", {"back"}, {"t2"}, {{"perm", to_nhwc}})
                .node("Transpose", {"t2"}, {"t3"}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}})
                .node("Sigmoid", {"t3"}, {"y"})
                .output("y")
                .build();
  Tensor x = randn({2, 3, 4, 5}, DType::Float32, &gen);
  Tensor before = run_unoptimized(g, x);
  EXPECT_GE(sink_transposes(g), 2u);
  eliminate_dead_nodes(g);
  // The first pair cancels through Add and LeakyRelu; the last two merge into one.
  EXPECT_EQ(count_ops(g, "Transpose"), 1u);
  EXPECT_LE(max_diff(run_unoptimized(g, x), before), 1e-6);
}

TEST(GraphPasses, TransposesStayWhenTheirValueIsUsedElsewhere) {
  const std::vector<int64_t> to_nhwc{0, 2, 3, 1}, to_nchw{0, 3, 1, 2};
  Graph g = GraphBuilder(13)
                .input("x", {1, 2, 3, 3})
                .node("Transpose", {"x"}, {"t"}, {{"perm", to_nhwc}})
                .node("Relu", {"t"}, {"r"})
                .node("Transpose", {"r"}, {"y"}, {{"perm", to_nchw}})
                .node("Sigmoid", {"t"}, {"z"})
                .output("y")
                .output("z")
                .build();
  EXPECT_EQ(sink_transposes(g), 0u);
  EXPECT_EQ(count_ops(g, "Transpose"), 2u);
}

TEST(GraphPasses, ZeroSpatialPadFoldsIntoTheConv) {
  Generator gen(8);
  auto graph = [&](std::vector<int64_t> pads, float value) {
    return GraphBuilder(13)
        .input("x", {1, 2, 5, 6})
        .init("w", randn({3, 2, 3, 3}, DType::Float32, &gen))
        .init("pads", from_vector(pads))
        .init("value", full({}, value, DType::Float32))
        .node("Pad", {"x", "pads", "value"}, {"p"})
        .node("Conv", {"p", "w"}, {"y"}, {{"pads", std::vector<int64_t>{0, 1, 0, 0}}})
        .output("y")
        .build();
  };
  Tensor x = randn({1, 2, 5, 6}, DType::Float32, &gen);
  Graph g = graph({0, 0, 1, 0, 0, 0, 2, 1}, 0.f);  // top 1, bottom 2, right 1
  Tensor before = run_unoptimized(g, x);
  EXPECT_EQ(fold_pad_into_conv(g), 1u);
  EXPECT_EQ(count_ops(g, "Pad"), 0u);
  EXPECT_EQ(g.nodes[0].attr_ints("pads"), (std::vector<int64_t>{1, 1, 2, 1}));
  EXPECT_LE(max_diff(run_unoptimized(g, x), before), 1e-6);
  // A non-zero value or a padded channel axis must stay a Pad.
  Graph nonzero = graph({0, 0, 1, 0, 0, 0, 2, 1}, 1.f);
  EXPECT_EQ(fold_pad_into_conv(nonzero), 0u);
  Graph channels = graph({0, 1, 1, 0, 0, 0, 2, 1}, 0.f);
  EXPECT_EQ(fold_pad_into_conv(channels), 0u);
}

TEST(GraphPasses, MinusInfinityPadFoldsIntoTheMaxPool) {
  Generator gen(9);
  auto graph = [&](float value) {
    return GraphBuilder(13)
        .input("x", {1, 2, 6, 7})
        .init("pads", from_vector(std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}))
        .init("value", full({}, value, DType::Float32))
        .node("Pad", {"x", "pads", "value"}, {"p"})
        .node("MaxPool", {"p"}, {"y"}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                        {"strides", std::vector<int64_t>{2, 2}}})
        .output("y")
        .build();
  };
  Tensor x = randn({1, 2, 6, 7}, DType::Float32, &gen);
  Graph g = graph(-std::numeric_limits<float>::infinity());
  Tensor before = run_unoptimized(g, x);
  EXPECT_EQ(fold_pad_into_conv(g), 1u);
  EXPECT_EQ(count_ops(g, "Pad"), 0u);
  EXPECT_EQ(g.nodes[0].attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(max_diff(run_unoptimized(g, x), before), 0.0);
  Graph zero = graph(0.f);  // zeros can win a max: not foldable
  EXPECT_EQ(fold_pad_into_conv(zero), 0u);
}

TEST(GraphPasses, OptimizeLevelsAreOrdered) {
  Graph g0 = conv_bn_graph(true), g1 = conv_bn_graph(true), g2 = conv_bn_graph(true);
  EXPECT_EQ(optimize(g0, {0}), 0u);
  optimize(g1, {1});
  optimize(g2, {2});
  EXPECT_EQ(count_ops(g1, "BatchNormalization"), 1u);
  EXPECT_EQ(count_ops(g2, "BatchNormalization"), 0u);
}

}  // namespace
}  // namespace skiff::graph
