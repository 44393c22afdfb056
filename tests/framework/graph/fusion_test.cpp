// The fusion passes (framework/graph/fusion.h) one by one: each fires on its pattern, leaves
// shared intermediates, non-constant weights and graph outputs alone, and keeps the outputs
// unchanged within 1e-5 relative. The fused ops' fast paths (oneDNN) are compared with the
// unfused graph, and their composite paths with it too where the fast path does not apply.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "framework/core/rng.h"
#include "framework/engine/predictor.h"
#include "framework/graph/fusion.h"
#include "framework/graph/ops/fused.h"
#include "framework/graph/passes.h"
#include "framework/ops/ops.h"
#include "tests/framework/graph/graph_builder.h"
#include "tests/framework/scoped_threads.h"

namespace skiff::graph {
namespace {

using testing::GraphBuilder;
using NodeAttrs = std::map<std::string, AttrValue>;

std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs) {
  return engine::Predictor(g, {0}).run(inputs);
}

/// max |a - b| / max |b|
double rel_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double scale = std::max(amax(abs(b)).item<double>(), 1e-30);
  return amax(abs(sub(to(a, DType::Float64), to(b, DType::Float64)))).item<double>() / scale;
}

size_t count_ops(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op;
  return n;
}

const Node& only_node(const Graph& g, const std::string& op) {
  for (const auto& n : g.nodes)
    if (n.op_type == op) return n;
  ADD_FAILURE() << "no " << op << " node";
  return g.nodes.front();
}

std::vector<std::string> chain_names(const Node& n) {
  std::vector<std::string> names;
  for (const auto& op : post_ops_of(n)) names.push_back(op.name);
  return names;
}

/// Checks that `pass` rewrites `expected` times and that every output is unchanged.
void expect_preserved(Graph g, const std::vector<Tensor>& inputs, size_t (*pass)(Graph&), size_t expected,
                      double tol = 1e-5) {
  std::vector<Tensor> before = run(g, inputs);
  EXPECT_EQ(pass(g), expected);
  g.validate();
  std::vector<Tensor> after = run(g, inputs);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_LT(rel_diff(after[i], before[i]), tol) << "output " << i;
}

/// Same shape and bit-for-bit the same float32 values (NaN matching NaN).
bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  auto x = contiguous(a).to_vector<float>(), y = contiguous(b).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  return true;
}

Tensor scalar(float v) { return full({1}, v, DType::Float32); }
Tensor scalar0(float v) { return full({}, v, DType::Float32); }

NodeAttrs pads1() { return {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}; }

/// Adds x * clip(x + 3, 0, 6) / 6 on value `x` as `out` (the paddle2onnx decomposition).
GraphBuilder& hardswish(GraphBuilder& b, const std::string& x, const std::string& out) {
  b.init(x + ".three", scalar0(3.f)).init(x + ".zero", scalar0(0.f)).init(x + ".six", scalar0(6.f));
  return b.node("Add", {x, x + ".three"}, {x + ".p3"})
      .node("Clip", {x + ".p3", x + ".zero", x + ".six"}, {x + ".clip"})
      .node("Mul", {x, x + ".clip"}, {x + ".m"})
      .node("Div", {x + ".m", x + ".six"}, {out});
}

// ---- fold_conv_affine ------------------------------------------------------------------------

Graph conv_affine_graph(bool weights_constant, bool conv_output_is_output, bool share_conv_output) {
  Generator gen(3);
  GraphBuilder b(13);
  b.input("x", {-1, 4, -1, -1}).init("b", randn({8}, DType::Float32, &gen));
  if (weights_constant) b.init("w", randn({8, 4, 3, 3}, DType::Float32, &gen));
  else b.input("w", {8, 4, 3, 3});
  b.init("s", scalar(1.7f))
      .init("pc", randn({1, 8, 1, 1}, DType::Float32, &gen))
      .init("d", scalar0(-2.5f))
      .init("sc", randn({8, 1, 1}, DType::Float32, &gen))
      .node("Conv", {"x", "w", "b"}, {"c"}, pads1())
      .node("Mul", {"s", "c"}, {"m"})
      .node("Add", {"m", "pc"}, {"a"})
      .node("Div", {"a", "d"}, {"q"})
      .node("Sub", {"q", "sc"}, {"y"})
      .output("y");
  if (conv_output_is_output) b.output("c");
  if (share_conv_output) b.node("Relu", {"c"}, {"r"}).output("r");
  return b.build();
}

TEST(FusionPasses, ConvAffineFoldsScalarAndPerChannelConstants) {
  Generator gen(5);
  Tensor x = randn({2, 4, 9, 8}, DType::Float32, &gen);
  Graph g = conv_affine_graph(true, false, false);
  expect_preserved(g, {x}, fold_conv_affine, 4);
  fold_conv_affine(g);
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Conv");
}

TEST(FusionPasses, ConvAffineLeavesSharedOutputsAndVariableWeightsAlone) {
  Generator gen(5);
  Tensor x = randn({1, 4, 6, 6}, DType::Float32, &gen);
  Tensor w = randn({8, 4, 3, 3}, DType::Float32, &gen);
  expect_preserved(conv_affine_graph(true, true, false), {x}, fold_conv_affine, 0);
  expect_preserved(conv_affine_graph(true, false, true), {x}, fold_conv_affine, 0);
  expect_preserved(conv_affine_graph(false, false, false), {x, w}, fold_conv_affine, 0);
}

TEST(FusionPasses, ConvAffineLeavesNonChannelBroadcastsAlone) {
  Generator gen(6);
  Graph g = GraphBuilder(13)
                .input("x", {1, 4, 6, 6})
                .init("w", randn({8, 4, 1, 1}, DType::Float32, &gen))
                .init("row", randn({1, 1, 1, 6}, DType::Float32, &gen))
                .init("f64", full({1}, 2.0, DType::Float64))
                .node("Conv", {"x", "w"}, {"c"})
                .node("Mul", {"c", "row"}, {"y"})
                .node("Conv", {"x", "w"}, {"c2"})
                .node("Mul", {"c2", "f64"}, {"y2"})  // promotes to float64: must stay
                .output("y")
                .output("y2")
                .build();
  expect_preserved(g, {randn({1, 4, 6, 6}, DType::Float32, &gen)}, fold_conv_affine, 0);
}

TEST(FusionPasses, ConvTransposeFoldsBiasAddAndBatchNorm) {
  Generator gen(7);
  Graph g = GraphBuilder(13)
                .input("x", {-1, 6, -1, -1})
                .init("w", randn({6, 5, 2, 2}, DType::Float32, &gen))
                .init("bias", randn({1, 5, 1, 1}, DType::Float32, &gen))
                .init("gamma", rand({5}, DType::Float32, &gen, 0.5, 1.5))
                .init("beta", randn({5}, DType::Float32, &gen))
                .init("mean", randn({5}, DType::Float32, &gen))
                .init("var", rand({5}, DType::Float32, &gen, 0.1, 2.0))
                .node("ConvTranspose", {"x", "w"}, {"t"}, {{"strides", std::vector<int64_t>{2, 2}}})
                .node("Add", {"t", "bias"}, {"tb"})
                .node("BatchNormalization", {"tb", "gamma", "beta", "mean", "var"}, {"bn"})
                .node("Relu", {"bn"}, {"y"})
                .output("y")
                .build();
  expect_preserved(g, {randn({2, 6, 5, 4}, DType::Float32, &gen)}, fold_conv_affine, 2);
}

// ---- fuse_activations ----------------------------------------------------------------------

TEST(FusionPasses, ActivationPatternsBecomeOneEltwiseEach) {
  Generator gen(8);
  GraphBuilder b(13);
  b.input("x", {2, 3, 5, 7}).init("two", scalar(2.f)).init("k", scalar(0.5f)).init("c", scalar(-1.25f));
  hardswish(b, "x", "hs");
  b.node("Mul", {"hs", "k"}, {"hs_k"})  // linear steps join the chain
      .node("Add", {"hs_k", "c"}, {"y1"})
      .node("Mul", {"x", "two"}, {"x2"})
      .node("Sigmoid", {"x2"}, {"sg"})
      .node("Mul", {"sg", "x"}, {"y2"})  // swish(2)
      .node("HardSigmoid", {"x"}, {"y3"}, {{"alpha", 0.3f}, {"beta", 0.4f}})
      .node("Relu", {"x"}, {"r"})
      .node("Clip", {"r", "", "two"}, {"y4"})  // relu then clip(-inf, 2) -> one chain
      .node("HardSigmoid", {"x"}, {"hsig"}, {{"alpha", 1.f / 6.f}, {"beta", 0.5f}})
      .node("Mul", {"x", "hsig"}, {"y5"})  // hardswish, second form
      .output("y1").output("y2").output("y3").output("y4").output("y5");
  Graph g = b.build();
  Tensor x = mul(randn({2, 3, 5, 7}, DType::Float32, &gen), 4.0);
  expect_preserved(g, {x}, fuse_activations, 8);
  fuse_activations(g);
  EXPECT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(count_ops(g, "skiff.Eltwise"), 5u);
  EXPECT_EQ(chain_names(g.nodes[0]), (std::vector<std::string>{"hardswish", "linear"}));
  EXPECT_EQ(chain_names(g.nodes[1]), (std::vector<std::string>{"swish"}));
  EXPECT_FLOAT_EQ(post_ops_of(g.nodes[1])[0].alpha, 2.f);
  EXPECT_EQ(chain_names(g.nodes[3]), (std::vector<std::string>{"relu", "clip"}));
  EXPECT_EQ(chain_names(g.nodes[4]), (std::vector<std::string>{"hardswish"}));
}

TEST(FusionPasses, ActivationPatternsWithSharedIntermediatesAreNotFused) {
  Generator gen(9);
  GraphBuilder b(13);
  b.input("x", {2, 3, 4, 4}).init("k", scalar(0.5f));
  hardswish(b, "x", "hs");
  b.output("hs").output("x.clip");  // the clip is also a graph output: no hardswish
  b.node("Relu", {"x"}, {"r"}).node("Sigmoid", {"r"}, {"s"}).output("r").output("s");  // r is an output
  b.node("Mul", {"x", "k"}, {"lin"}).output("lin");  // a linear step alone is left as it is
  Graph g = b.build();
  Tensor x = mul(randn({2, 3, 4, 4}, DType::Float32, &gen), 4.0);
  std::vector<Tensor> before = run(g, {x});
  fuse_activations(g);
  for (const auto& n : g.nodes)
    for (const auto& step : chain_names(n)) EXPECT_NE(step, "hardswish");
  EXPECT_EQ(count_ops(g, "Mul"), 2u);  // the hardswish product and the lone linear
  for (const auto& n : g.nodes) EXPECT_LE(chain_names(n).size(), 1u) << n.describe();
  std::vector<Tensor> after = run(g, {x});
  for (size_t i = 0; i < before.size(); ++i) EXPECT_LT(rel_diff(after[i], before[i]), 1e-6);
}

// ---- fuse_conv_activation / fuse_all -----------------------------------------------------

/// x -> Conv -> activation `act` -> y, as one graph.
Graph conv_act_graph(const std::string& act, bool weights_constant = true, int64_t groups = 1) {
  Generator gen(10);
  GraphBuilder b(13);
  b.input("x", {-1, 8, -1, -1}).init("b", randn({8}, DType::Float32, &gen));
  Tensor w = mul(randn({8, 8 / groups, 3, 3}, DType::Float32, &gen), 0.3);
  if (weights_constant) b.init("w", w);
  else b.input("w", {8, 8 / groups, 3, 3});
  b.init("zero", scalar0(0.f)).init("six", scalar0(6.f)).init("a", scalar(1.5f));
  b.node("Conv", {"x", "w", "b"}, {"c"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", groups}});
  if (act == "relu") b.node("Relu", {"c"}, {"y"});
  else if (act == "leaky_relu") b.node("LeakyRelu", {"c"}, {"y"}, {{"alpha", 0.1f}});
  else if (act == "relu6") b.node("Clip", {"c", "zero", "six"}, {"y"});
  else if (act == "hardsigmoid") b.node("HardSigmoid", {"c"}, {"y"});
  else if (act == "sigmoid") b.node("Sigmoid", {"c"}, {"y"});
  else if (act == "swish") b.node("Sigmoid", {"c"}, {"s"}).node("Mul", {"c", "s"}, {"y"});
  else if (act == "hardswish") hardswish(b, "c", "y");
  else if (act == "hardswish_affine")
    hardswish(b, "c", "h").node("Mul", {"a", "h"}, {"ha"}).node("Add", {"ha", "a"}, {"y"});
  return b.output("y").build();
}

TEST(FusionPasses, ConvAndActivationBecomeOneFusedConv) {
  Generator gen(11);
  Tensor x = mul(randn({2, 8, 11, 9}, DType::Float32, &gen), 3.0);
  for (std::string act :
       {"relu", "leaky_relu", "relu6", "hardsigmoid", "sigmoid", "swish", "hardswish", "hardswish_affine"}) {
    for (int64_t groups : {1, 8}) {
      SCOPED_TRACE(act + " groups=" + std::to_string(groups));
      Graph g = conv_act_graph(act, true, groups);
      fuse_activations(g);
      expect_preserved(g, {x}, fuse_conv_activation, 1);
      fuse_conv_activation(g);
      ASSERT_EQ(g.nodes.size(), 1u);
      EXPECT_EQ(g.nodes[0].op_type, "skiff.FusedConv");
      // fuse_all from scratch gives the same single node.
      Graph h = conv_act_graph(act, true, groups);
      expect_preserved(h, {x}, fuse_all, act == "hardswish_affine" ? 4u : 2u);
    }
  }
}

TEST(FusionPasses, ConvActivationNotFusedForVariableWeightsOrSharedOutput) {
  Generator gen(12);
  Tensor x = randn({1, 8, 6, 6}, DType::Float32, &gen);
  Tensor w = randn({8, 8, 3, 3}, DType::Float32, &gen);
  Graph g = conv_act_graph("relu", false);
  fuse_activations(g);
  expect_preserved(g, {x, w}, fuse_conv_activation, 0);

  Graph shared = conv_act_graph("relu");
  shared.outputs.push_back(ValueInfo{"c", DType::Float32, false, {}});  // conv output is a graph output
  fuse_activations(shared);
  expect_preserved(shared, {x}, fuse_conv_activation, 0);
  EXPECT_EQ(count_ops(shared, "Conv"), 1u);
}

TEST(FusionPasses, FusedConvWithAsymmetricPaddingTakesTheCompositePath) {
  Generator gen(13);
  Graph g = conv_act_graph("hardswish");
  g.nodes[0].attrs["pads"] = std::vector<int64_t>{0, 1, 2, 1};
  Tensor x = randn({1, 8, 7, 7}, DType::Float32, &gen);
  expect_preserved(g, {x}, fuse_all, 2);
  fuse_all(g);
  EXPECT_EQ(count_ops(g, "skiff.FusedConv"), 1u);
}

// ---- fuse_conv_residual --------------------------------------------------------------------

TEST(FusionPasses, ConvPlusResidualBecomesSumPostOp) {
  Generator gen(14);
  Graph g = GraphBuilder(13)
                .input("x", {-1, 8, -1, -1})
                .input("r", {-1, 8, -1, -1})
                .init("w", mul(randn({8, 8, 1, 1}, DType::Float32, &gen), 0.3))
                .init("b", randn({8}, DType::Float32, &gen))
                .node("Conv", {"x", "w", "b"}, {"c"})
                .node("Relu", {"c"}, {"cr"})
                .node("Add", {"r", "cr"}, {"s"})
                .node("Relu", {"s"}, {"y"})
                .output("y")
                .build();
  Tensor x = randn({2, 8, 5, 6}, DType::Float32, &gen), r = randn({2, 8, 5, 6}, DType::Float32, &gen);
  expect_preserved(g, {x, r}, fuse_all, 5);  // 2 relus, conv+relu, residual, conv+relu
  fuse_all(g);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(chain_names(g.nodes[0]), (std::vector<std::string>{"relu", "sum", "relu"}));
  // A residual that broadcasts takes the composite path.
  Tensor r_row = randn({1, 8, 1, 6}, DType::Float32, &gen);
  Graph h = GraphBuilder(13)
                .input("x", {-1, 8, -1, -1})
                .input("r", {-1, -1, -1, -1})
                .init("w", randn({8, 8, 1, 1}, DType::Float32, &gen))
                .node("Conv", {"x", "w"}, {"c"})
                .node("Add", {"c", "r"}, {"y"})
                .output("y")
                .build();
  expect_preserved(h, {x, r_row}, fuse_conv_residual, 1);
}

TEST(FusionPasses, ConvResidualNotFusedWhenConvOutputIsShared) {
  Generator gen(15);
  Graph g = GraphBuilder(13)
                .input("x", {1, 4, 5, 5})
                .init("w", randn({4, 4, 1, 1}, DType::Float32, &gen))
                .node("Conv", {"x", "w"}, {"c"})
                .node("Add", {"c", "x"}, {"y"})
                .node("Relu", {"c"}, {"z"})
                .output("y")
                .output("z")
                .build();
  expect_preserved(g, {randn({1, 4, 5, 5}, DType::Float32, &gen)}, fuse_conv_residual, 0);
  // Variable weights.
  Graph v = GraphBuilder(13)
                .input("x", {1, 4, 5, 5})
                .input("w", {4, 4, 1, 1})
                .node("Conv", {"x", "w"}, {"c"})
                .node("Add", {"c", "x"}, {"y"})
                .output("y")
                .build();
  expect_preserved(v, {randn({1, 4, 5, 5}, DType::Float32, &gen), randn({4, 4, 1, 1}, DType::Float32, &gen)},
                   fuse_conv_residual, 0);
}

// ---- fuse_channel_mul ----------------------------------------------------------------------

Graph se_graph(bool residual) {
  Generator gen(16);
  GraphBuilder b(13);
  b.input("x", {-1, 8, -1, -1})
      .init("w1", randn({2, 8, 1, 1}, DType::Float32, &gen))
      .init("w2", randn({8, 2, 1, 1}, DType::Float32, &gen))
      .node("GlobalAveragePool", {"x"}, {"p"})
      .node("Conv", {"p", "w1"}, {"q"})
      .node("Relu", {"q"}, {"qr"})
      .node("Conv", {"qr", "w2"}, {"e"})
      .node("HardSigmoid", {"e"}, {"s"})
      .node("Mul", {"x", "s"}, {"m"});
  if (residual) b.node("Add", {"x", "m"}, {"y"});
  else b.node("Identity", {"m"}, {"y"});
  return b.output("y").build();
}

TEST(FusionPasses, SqueezeExciteGateBecomesChannelMul) {
  Generator gen(17);
  Tensor x = randn({2, 8, 7, 5}, DType::Float32, &gen);
  expect_preserved(se_graph(false), {x}, fuse_channel_mul, 1);
  expect_preserved(se_graph(true), {x}, fuse_channel_mul, 2);
  Graph g = se_graph(true);
  expect_preserved(g, {x}, fuse_all, 7);  // + the blocked layout between the two gate convs
  fuse_all(g);
  EXPECT_EQ(count_ops(g, "skiff.FusedConv"), 2u);
  ASSERT_EQ(count_ops(g, "skiff.ChannelMul"), 1u);
  EXPECT_EQ(only_node(g, "skiff.ChannelMul").attr_int("residual", 0), 1);
  EXPECT_EQ(count_ops(g, "GlobalAveragePool"), 1u);
  EXPECT_EQ(g.nodes.size(), 4u);
}

TEST(FusionPasses, ChannelMulFallsBackForOtherShapes) {
  Generator gen(18);
  // The gate has the full shape: the broadcasting Mul/Add path runs.
  Graph g = GraphBuilder(13)
                .input("x", {2, 3, 4, 4})
                .input("t", {2, 3, 4, 4})
                .node("Sigmoid", {"t"}, {"s"})
                .node("Mul", {"s", "x"}, {"m"})
                .node("Add", {"m", "x"}, {"y"})
                .output("y")
                .build();
  expect_preserved(g, {randn({2, 3, 4, 4}, DType::Float32, &gen), randn({2, 3, 4, 4}, DType::Float32, &gen)},
                   fuse_channel_mul, 2);
}

// ---- use_fused_convs -------------------------------------------------------------------------

TEST(FusionPasses, PlainConvsWithConstantWeightsUseTheFusedOp) {
  Generator gen(21);
  Graph g = GraphBuilder(13)
                .input("x", {-1, 4, -1, -1})
                .input("wv", {4, 4, 3, 3})
                .init("w", randn({6, 4, 3, 3}, DType::Float32, &gen))
                .node("Conv", {"x", "w"}, {"y"}, pads1())
                .node("Conv", {"x", "wv"}, {"z"})
                .output("y")
                .output("z")
                .build();
  std::vector<Tensor> inputs{randn({2, 4, 7, 6}, DType::Float32, &gen), randn({4, 4, 3, 3}, DType::Float32, &gen)};
  expect_preserved(g, inputs, use_fused_convs, 1);
  use_fused_convs(g);
  EXPECT_EQ(g.nodes[0].op_type, "skiff.FusedConv");
  EXPECT_TRUE(chain_names(g.nodes[0]).empty());
  EXPECT_EQ(g.nodes[1].op_type, "Conv");
}

// ---- fuse_upsample_add -------------------------------------------------------------------------

Graph upsample_graph(const std::string& coord, Tensor scales, bool add_output_too) {
  GraphBuilder b(13);
  b.input("x", {-1, 3, -1, -1}).input("r", {-1, 3, -1, -1}).init("roi", empty({0})).init("scales", scales);
  b.node("Resize", {"x", "roi", "scales"}, {"u"},
         {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", coord},
          {"nearest_mode", std::string("floor")}})
      .node("Add", {"r", "u"}, {"y"})
      .output("y");
  if (add_output_too) b.output("u");
  return b.build();
}

TEST(FusionPasses, NearestUpsampleAndAddBecomeOneOp) {
  Generator gen(22);
  Tensor x = randn({2, 3, 5, 4}, DType::Float32, &gen), r = randn({2, 3, 10, 12}, DType::Float32, &gen);
  Tensor s23 = from_vector(std::vector<float>{1.f, 1.f, 2.f, 3.f});
  expect_preserved(upsample_graph("asymmetric", s23, false), {x, r}, fuse_upsample_add, 2);
  Graph g = upsample_graph("asymmetric", s23, false);
  fuse_upsample_add(g);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "skiff.UpsampleNearest");
  // The resized value is also a graph output: only the Resize is rewritten.
  expect_preserved(upsample_graph("asymmetric", s23, true), {x, r}, fuse_upsample_add, 1);
  // Other coordinate modes take the Resize op's path.
  expect_preserved(upsample_graph("half_pixel", s23, false), {x, r}, fuse_upsample_add, 2);
  // Every factor shape of the direct loop (fw 1, 2, general), with and without the residual.
  for (auto [fh, fw] : std::vector<std::pair<int64_t, int64_t>>{{3, 2}, {1, 2}, {2, 1}, {4, 4}, {1, 3}}) {
    SCOPED_TRACE(fmt::format("fh {} fw {}", fh, fw));
    Tensor s = from_vector(std::vector<float>{1.f, 1.f, float(fh), float(fw)});
    Tensor rr = randn({2, 3, 5 * fh, 4 * fw}, DType::Float32, &gen);
    expect_preserved(upsample_graph("asymmetric", s, false), {x, rr}, fuse_upsample_add, 2, 1e-6);
    expect_preserved(upsample_graph("asymmetric", s, true), {x, rr}, fuse_upsample_add, 1, 1e-6);
  }
}

// ---- fuse_layer_norm -----------------------------------------------------------------------------

struct LayerNormSpec {
  std::vector<int64_t> axes{-1};
  float exponent = 2.f;
  bool gamma = true, beta = true;
  bool beta_first = false;   // Add(beta, y) instead of Add(y, beta)
  bool d_is_output = false;  // x - mean is also a graph output
  bool mean_of_other = false;  // Sub(x, mean(t)): not a normalisation of x
  DType dtype = DType::Float32;
};

/// The spelled-out layer norm as paddle2onnx writes it, over x [N, T, 8].
Graph layer_norm_graph(const LayerNormSpec& s) {
  Generator gen(26);
  GraphBuilder b(13);
  NodeAttrs axes{{"axes", s.axes}};
  b.input("x", {-1, -1, 8}, s.dtype).input("t", {-1, -1, 8}, s.dtype);
  b.init("two", to(scalar0(s.exponent), s.dtype)).init("eps", to(scalar0(1e-5f), s.dtype));
  b.init("gamma", to(randn({8}, DType::Float32, &gen), s.dtype)).init("beta", to(randn({8}, DType::Float32, &gen), s.dtype));
  b.node("ReduceMean", {s.mean_of_other ? "t" : "x"}, {"m"}, axes)
      .node("Sub", {"x", "m"}, {"d"})
      .node("Pow", {"d", "two"}, {"p"})
      .node("ReduceMean", {"p"}, {"v"}, axes)
      .node("Add", {"v", "eps"}, {"ve"})
      .node("Sqrt", {"ve"}, {"sd"})
      .node("Div", {"d", "sd"}, {"n"});
  std::string out = "n";
  if (s.gamma) {
    b.node("Mul", {"n", "gamma"}, {"ng"});
    out = "ng";
    if (s.beta) {
      b.node("Add", s.beta_first ? std::vector<std::string>{"beta", "ng"} : std::vector<std::string>{"ng", "beta"},
             {"y"});
      out = "y";
    }
  }
  b.node("Relu", {out}, {"r"}).output("r", s.dtype);
  if (s.d_is_output) b.output("d", s.dtype);
  return b.build();
}

TEST(FusionPasses, SpelledOutLayerNormBecomesOneOp) {
  Generator gen(27);
  Tensor x = add(mul(randn({2, 5, 8}, DType::Float32, &gen), 3.0), 1.5), t = randn({2, 5, 8}, DType::Float32, &gen);
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    LayerNormSpec spec;
    spec.beta_first = variant == 1;
    spec.beta = variant != 2;
    spec.gamma = variant != 3;
    Graph g = layer_norm_graph(spec);
    expect_preserved(g, {x, t}, fuse_layer_norm, 1);
    fuse_layer_norm(g);
    ASSERT_EQ(g.nodes.size(), 2u);
    const Node& ln = only_node(g, "skiff.LayerNorm");
    EXPECT_EQ(ln.inputs.size(), spec.gamma ? (spec.beta ? 3u : 2u) : 1u);
    EXPECT_FLOAT_EQ(ln.attr_float("epsilon", 0.f), 1e-5f);
  }
  // fuse_all runs it (the Relu after it becomes an Eltwise).
  expect_preserved(layer_norm_graph({}), {x, t}, fuse_all, 2);
  // Float64 tensors take the skiff-ops path of the op.
  Graph f = layer_norm_graph({});
  fuse_layer_norm(f);
  const Node& ln = only_node(f, "skiff.LayerNorm");
  const Tensor& gamma = f.initializers.at("gamma");
  const Tensor& beta = f.initializers.at("beta");
  Tensor fast = run_node(ln, {x, gamma, beta}, 13)[0];
  Tensor composite = run_node(ln, {to(x, DType::Float64), to(gamma, DType::Float64), to(beta, DType::Float64)}, 13)[0];
  EXPECT_EQ(composite.dtype(), DType::Float64);
  EXPECT_LT(rel_diff(fast, composite), 1e-5);
  // Prepared run and a single-row input through the Predictor.
  Graph g = layer_norm_graph({});
  optimize(g, {2});
  EXPECT_EQ(count_ops(g, "skiff.LayerNorm"), 1u);
  Tensor one_row = randn({1, 1, 8}, DType::Float32, &gen);
  EXPECT_LT(rel_diff(engine::Predictor(g, {0}).run(std::vector<Tensor>{one_row, one_row})[0],
                     run(layer_norm_graph({}), {one_row, one_row})[0]),
            1e-5);
}

TEST(FusionPasses, LayerNormLookAlikesAreLeftAlone) {
  Generator gen(28);
  Tensor x = randn({2, 5, 8}, DType::Float32, &gen), t = randn({2, 5, 8}, DType::Float32, &gen);
  LayerNormSpec other_axis, cube, shared, foreign_mean;
  other_axis.axes = {1};
  cube.exponent = 3.f;
  shared.d_is_output = true;
  foreign_mean.mean_of_other = true;
  for (const LayerNormSpec& s : {other_axis, cube, shared, foreign_mean})
    expect_preserved(layer_norm_graph(s), {x, t}, fuse_layer_norm, 0);
  // gamma that broadcasts along another axis stays a separate Mul (the norm itself still fuses).
  Graph g = layer_norm_graph({});
  g.initializers["gamma"] = randn({5, 1}, DType::Float32, &gen);
  expect_preserved(g, {x, t}, fuse_layer_norm, 1);
  fuse_layer_norm(g);
  EXPECT_EQ(only_node(g, "skiff.LayerNorm").inputs.size(), 1u);
  EXPECT_EQ(count_ops(g, "Mul"), 1u);
}

// ---- prepared steps ---------------------------------------------------------------------------

TEST(FusionPasses, PreparedFusedOpsMatchUnpreparedRunsForEverySize) {
  Generator gen(25);
  // Static (explicit pads) and per-call (auto_pad) padding; an activation chain on its own.
  for (std::string auto_pad : {"NOTSET", "SAME_UPPER", "SAME_LOWER"}) {
    SCOPED_TRACE(auto_pad);
    Graph g = conv_act_graph("hardswish_affine");
    g.nodes[0].attrs["strides"] = std::vector<int64_t>{2, 2};
    if (auto_pad != "NOTSET") {
      g.nodes[0].attrs.erase("pads");
      g.nodes[0].attrs["auto_pad"] = auto_pad;
    }
    Graph unfused = g;
    optimize(g, {2});
    ASSERT_EQ(g.nodes.size(), 1u);
    ASSERT_EQ(g.nodes[0].op_type, "skiff.FusedConv");
    engine::Predictor p(g, {0});
    for (Shape shape : {Shape{1, 8, 9, 9}, Shape{2, 8, 6, 11}}) {
      Tensor x = mul(randn(shape, DType::Float32, &gen), 3.0);
      Tensor prepared = p.run(std::vector<Tensor>{x})[0];
      Tensor direct = run_node(g.nodes[0], {x, g.initializers.at(g.nodes[0].inputs[1]),
                                            g.initializers.at(g.nodes[0].inputs[2])}, 13)[0];
      EXPECT_TRUE(same_values(prepared, direct));
      EXPECT_LT(rel_diff(prepared, run(unfused, {x})[0]), 1e-5);
    }
  }
  Graph e = GraphBuilder(13).input("x", {-1, 4}).node("Relu", {"x"}, {"r"}).node("Sigmoid", {"r"}, {"y"}).output("y").build();
  Tensor x = randn({3, 4}, DType::Float32, &gen);
  Tensor before = run(e, {x})[0];
  fuse_activations(e);
  ASSERT_EQ(e.nodes.size(), 1u);
  EXPECT_TRUE(same_values(engine::Predictor(e, {0}).run(std::vector<Tensor>{x})[0], run_node(e.nodes[0], {x}, 13)[0]));
  EXPECT_LT(rel_diff(run(e, {x})[0], before), 1e-6);
}

// Wide 3x3 stride-1 layers (>= 32 channels, >= 26x26) run as Winograd on oneDNN, which takes no
// post-ops: the chain (leaky relu, then a linear step) runs after the convolution.
TEST(FusionPasses, WinogradFusedConvsStillApplyTheirChain) {
  Generator gen(24);
  GraphBuilder b(13);
  b.input("x", {-1, 32, -1, -1})
      .init("w", mul(randn({48, 32, 3, 3}, DType::Float32, &gen), 0.1))
      .init("b", randn({48}, DType::Float32, &gen))
      .init("a", scalar(1.5f))
      .node("Conv", {"x", "w", "b"}, {"c"}, pads1())
      .node("LeakyRelu", {"c"}, {"l"}, {{"alpha", 0.1f}})
      .node("Mul", {"l", "a"}, {"m"})
      .node("Add", {"m", "a"}, {"y"})
      .output("y");
  for (int64_t size : {30, 8}) {  // Winograd, and direct below the size threshold
    SCOPED_TRACE(size);
    Graph g = b.build();
    Tensor x = randn({1, 32, size, size + 3}, DType::Float32, &gen);
    std::vector<Tensor> before = run(g, {x});
    fuse_all(g);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(chain_names(g.nodes[0]), (std::vector<std::string>{"leaky_relu", "linear"}));
    EXPECT_LT(rel_diff(run(g, {x})[0], before[0]), 1e-5);
  }
}

// ---- select_blocked_layouts ----------------------------------------------------------------

TEST(FusionPasses, ConvChainsKeepTheBlockedLayoutBetweenFusedConvs) {
  Generator gen(20);
  // x -> conv1 (relu) -> conv2 dw (hardswish) -> conv3 (relu) -> y, and conv2's output also feeds
  // a GlobalAveragePool: only conv1's output may stay blocked. Channel counts not multiples of 16.
  GraphBuilder b(13);
  b.input("x", {-1, 5, -1, -1})
      .init("w1", mul(randn({20, 5, 3, 3}, DType::Float32, &gen), 0.3))
      .init("w2", mul(randn({20, 1, 3, 3}, DType::Float32, &gen), 0.3))
      .init("w3", mul(randn({7, 20, 1, 1}, DType::Float32, &gen), 0.3))
      .init("b3", randn({7}, DType::Float32, &gen))
      .node("Conv", {"x", "w1"}, {"c1"}, pads1())
      .node("Relu", {"c1"}, {"r1"})
      .node("Conv", {"r1", "w2"}, {"c2"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", int64_t(20)}});
  hardswish(b, "c2", "h2");
  b.node("Conv", {"h2", "w3", "b3"}, {"c3"})
      .node("Relu", {"c3"}, {"y"})
      .node("GlobalAveragePool", {"h2"}, {"p"})
      .output("y")
      .output("p");
  Graph g = b.build();
  Tensor x = randn({2, 5, 9, 10}, DType::Float32, &gen);
  std::vector<Tensor> before = run(g, {x});
  fuse_all(g);
  ASSERT_EQ(count_ops(g, "skiff.FusedConv"), 3u);
  int blocked = 0;
  for (const auto& n : g.nodes) blocked += n.attr_int("dst_blocked", 0) != 0;
  EXPECT_EQ(blocked, 1);
  EXPECT_EQ(g.nodes[0].attr_int("dst_blocked", 0), 1);
  EXPECT_EQ(select_blocked_layouts(g), 0u);  // idempotent
  std::vector<Tensor> after = run(g, {x});
  for (size_t i = 0; i < before.size(); ++i) EXPECT_LT(rel_diff(after[i], before[i]), 1e-5) << "output " << i;
  // The consumer of a blocked value may fall back to its composite path (asymmetric padding here).
  for (auto& n : g.nodes)
    if (n.attr_int("group", 1) == 20) n.attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  Graph asym = g;
  for (auto& n : asym.nodes)
    if (n.attr_int("group", 1) == 20) n.attrs["pads"] = std::vector<int64_t>{1, 0, 1, 2};
  Graph asym_ref = b.build();
  for (auto& n : asym_ref.nodes)
    if (n.attr_int("group", 1) == 20) n.attrs["pads"] = std::vector<int64_t>{1, 0, 1, 2};
  std::vector<Tensor> ref = run(asym_ref, {x}), got = run(asym, {x});
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_LT(rel_diff(got[i], ref[i]), 1e-5) << "output " << i;
}

/// A CSP-like block: r1 = relu(conv(x)) [16 ch], r2 = relu(conv(r1)) [16], cat1 = [r2, r1] [32],
/// r3 = relu(conv(cat1)) [16], cat2 = [r3, cat1] [48] (a concat of a concat, axis -3),
/// y = conv(cat2) [7]. With `side_concat`, also z = Concat(conv(x) [8 ch], r1): 8 channels are no
/// whole block, so that one stays a Concat and r1, which it reads, stays NCHW.
Graph csp_graph(bool side_concat) {
  Generator gen(21);
  auto w = [&](std::vector<int64_t> shape) { return mul(randn(Shape(shape), DType::Float32, &gen), 0.2); };
  GraphBuilder b(13);
  b.input("x", {-1, 5, -1, -1})
      .init("w1", w({16, 5, 3, 3}))
      .init("w2", w({16, 16, 3, 3}))
      .init("w3", w({16, 32, 1, 1}))
      .init("b3", w({16}))
      .init("w4", w({7, 48, 3, 3}))
      .node("Conv", {"x", "w1"}, {"c1"}, pads1())
      .node("Relu", {"c1"}, {"r1"})
      .node("Conv", {"r1", "w2"}, {"c2"}, pads1())
      .node("Relu", {"c2"}, {"r2"})
      .node("Concat", {"r2", "r1"}, {"cat1"}, {{"axis", int64_t(1)}})
      .node("Conv", {"cat1", "w3", "b3"}, {"c3"})
      .node("Relu", {"c3"}, {"r3"})
      .node("Concat", {"r3", "cat1"}, {"cat2"}, {{"axis", int64_t(-3)}})
      .node("Conv", {"cat2", "w4"}, {"y"}, pads1())
      .output("y");
  if (side_concat) {
    b.init("w5", w({8, 5, 1, 1}))
        .node("Conv", {"x", "w5"}, {"c5"})
        .node("Concat", {"c5", "r1"}, {"z"}, {{"axis", int64_t(1)}})
        .output("z");
  }
  return b.build();
}

int count_blocked(const Graph& g) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.attr_int("dst_blocked", 0) != 0;
  return n;
}

TEST(FusionPasses, ChannelConcatsKeepTheBlockedLayoutAcrossConcatenations) {
  Generator gen(22);
  Tensor x = randn({2, 5, 11, 9}, DType::Float32, &gen);
  Graph g = csp_graph(false);
  std::vector<Tensor> before = run(g, {x});
  fuse_all(g);
  g.validate();
  EXPECT_EQ(count_ops(g, "skiff.ChannelConcat"), 2u);
  EXPECT_EQ(count_ops(g, "Concat"), 0u);
  // Blocked: r1, r2, cat1, r3, cat2 (all read by convs and channel concats only); y is an output.
  EXPECT_EQ(count_blocked(g), 5);
  for (const auto& n : g.nodes) {
    if (n.op_type == "skiff.ChannelConcat") {
      EXPECT_EQ(n.attr_int("axis", 0), 1);
    }
  }
  EXPECT_EQ(only_node(g, "skiff.ChannelConcat").attr_ints("channels"), (std::vector<int64_t>{16, 16}));
  std::vector<Tensor> after = run(g, {x});
  ASSERT_EQ(after.size(), 1u);
  EXPECT_LT(rel_diff(after[0], before[0]), 1e-5);
  EXPECT_EQ(use_channel_blocked_ops(g), 0u);  // nothing left to rewrite
}

TEST(FusionPasses, ChannelConcatJoinsBlockedAndPlainInputs) {
  // r1 stays NCHW (it reaches the 8-channel Concat), r2 is blocked: cat1 mixes both layouts and
  // its result, and cat2's, are NCHW.
  Generator gen(23);
  Tensor x = randn({2, 5, 11, 9}, DType::Float32, &gen);
  Graph g = csp_graph(true);
  std::vector<Tensor> before = run(g, {x});
  fuse_all(g);
  EXPECT_EQ(count_ops(g, "skiff.ChannelConcat"), 2u);
  EXPECT_EQ(count_ops(g, "Concat"), 1u);
  EXPECT_EQ(count_blocked(g), 4);  // r2, cat1, r3, cat2
  std::vector<Tensor> after = run(g, {x});
  ASSERT_EQ(after.size(), 2u);
  for (size_t i = 0; i < after.size(); ++i) EXPECT_LT(rel_diff(after[i], before[i]), 1e-5) << "output " << i;
}

/// A feature pyramid on blocked values: stem conv -> MaxPool (k3 s2) -> c2 -> c3 (stride 2);
/// up = Resize(c3) to Shape(c2) (bilinear, half-pixel), a = c2 + up, y = conv(a) + up (a fused
/// Sum step). 20 channels: not a whole number of blocks.
Graph pyramid_graph() {
  Generator gen(24);
  auto w = [&](std::vector<int64_t> shape) { return mul(randn(Shape(shape), DType::Float32, &gen), 0.2); };
  GraphBuilder b(13);
  b.input("x", {-1, 5, -1, -1})
      .init("w1", w({20, 5, 3, 3}))
      .init("w2", w({20, 20, 3, 3}))
      .init("w3", w({20, 20, 3, 3}))
      .init("w4", w({20, 20, 1, 1}))
      .node("Conv", {"x", "w1"}, {"c1"}, pads1())
      .node("Relu", {"c1"}, {"r1"})
      .node("MaxPool", {"r1"}, {"p"},
            {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
             {"pads", std::vector<int64_t>{1, 1, 1, 1}}})
      .node("Conv", {"p", "w2"}, {"c2"}, pads1())
      .node("Conv", {"c2", "w3"}, {"c3"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}})
      .node("Shape", {"c2"}, {"size2"})
      .node("Resize", {"c3", "", "", "size2"}, {"up"},
            {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("half_pixel")}})
      .node("Add", {"c2", "up"}, {"a"})
      .node("Conv", {"a", "w4"}, {"c4"})
      .node("Add", {"c4", "up"}, {"y"})
      .output("y");
  return b.build();
}

TEST(FusionPasses, PoolResizeAndAddKeepTheBlockedLayoutInAPyramid) {
  Generator gen(25);
  Graph g = pyramid_graph();
  for (const Shape& shape : {Shape{1, 5, 17, 22}, Shape{2, 5, 12, 9}}) {
    SCOPED_TRACE(shape.str());
    Tensor x = randn(shape, DType::Float32, &gen);
    Graph fused = g;
    std::vector<Tensor> before = run(g, {x});
    fuse_all(fused);
    fused.validate();
    EXPECT_EQ(count_ops(fused, "skiff.ChannelBlocked"), 4u);  // MaxPool, Shape, Resize, the first Add
    EXPECT_EQ(count_ops(fused, "skiff.FusedConv"), 4u);       // the second Add is c4's Sum step
    if (fused_conv2d_prefers_blocked()) {
      // Blocked: r1, p, c2, c3, up, a; y (c4) is the graph output and Shape's result is a shape.
      EXPECT_EQ(count_blocked(fused), 6);
      for (const auto& n : fused.nodes) {
        if (n.op_type != "skiff.ChannelBlocked") continue;
        EXPECT_EQ(n.attr_int("dst_blocked", 0), n.attr_string("inner", "") == "Shape" ? 0 : 1) << n.name;
      }
    }
    std::vector<Tensor> after = run(fused, {x});
    ASSERT_EQ(after.size(), 1u);
    EXPECT_LT(rel_diff(after[0], before[0]), 1e-5);
  }
}

/// skiff.ChannelBlocked run on its own: mixed layouts, and what has no blocked path (asymmetric
/// pooling, broadcasting Add, nearest Resize), run as the inner op on NCHW values.
TEST(FusionPasses, ChannelBlockedNodesRunTheInnerOpWhereTheyCannotStayBlocked) {
  Generator gen(26);
  const GraphOp* op = find_graph_op("skiff.ChannelBlocked");
  ASSERT_NE(op, nullptr);
  auto node = [](const std::string& inner, NodeAttrs attrs) {
    Node n{"n", "skiff.ChannelBlocked", "", {}, {"out"}, attrs};
    n.attrs["inner"] = inner;
    n.attrs["channels"] = int64_t(20);
    n.attrs["dst_blocked"] = int64_t(1);
    return n;
  };
  auto call = [&](const Node& n, std::vector<Tensor> inputs) {
    return op->run(OpContext{n, inputs, 13, op->prepare ? op->prepare(n, 13).get() : nullptr});
  };
  auto nchw = [](const Tensor& t) { return t.dim() == 5 ? unblock_channels(t, 20) : t; };
  Tensor a = randn({1, 20, 7, 6}, DType::Float32, &gen), b = randn({1, 20, 7, 6}, DType::Float32, &gen);
  Tensor ab = to_channel_blocked(a), bb = to_channel_blocked(b);
  // Add: both blocked (stays blocked), one blocked (NCHW), broadcast (NCHW).
  const Node add_node = node("Add", {});
  Tensor both = call(add_node, {ab, bb})[0];
  EXPECT_EQ(both.dim(), 5);
  EXPECT_LT(rel_diff(nchw(both), add(a, b)), 1e-6);
  EXPECT_LT(rel_diff(nchw(call(add_node, {ab, b})[0]), add(a, b)), 1e-6);
  Tensor row = randn({1, 20, 1, 6}, DType::Float32, &gen);
  EXPECT_LT(rel_diff(nchw(call(add_node, {ab, row})[0]), add(a, row)), 1e-6);
  // Shape of a blocked value: the NCHW shape, start/end honoured.
  EXPECT_EQ(call(node("Shape", {}), {ab})[0].to_vector<int64_t>(), (std::vector<int64_t>{1, 20, 7, 6}));
  EXPECT_EQ(call(node("Shape", {{"start", int64_t(1)}, {"end", int64_t(3)}}), {ab})[0].to_vector<int64_t>(),
            (std::vector<int64_t>{20, 7}));
  // MaxPool: symmetric padding stays blocked; asymmetric runs on NCHW.
  const NodeAttrs k3{{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Tensor pooled = call(node("MaxPool", k3), {ab})[0];
  EXPECT_EQ(pooled.dim(), 5);
  EXPECT_LT(rel_diff(nchw(pooled), max_pool2d(a, {3, 3}, {1, 1}, {1, 1})), 1e-6);
  const NodeAttrs asym{{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{0, 0, 1, 1}}};
  Tensor padded = pad(a, {0, 1, 0, 1}, "constant", -std::numeric_limits<double>::infinity());
  EXPECT_LT(rel_diff(call(node("MaxPool", asym), {ab})[0], max_pool2d(padded, {2, 2}, {1, 1})), 1e-6);
  // Resize: bilinear stays blocked; nearest runs on NCHW.
  Tensor scales = from_vector(std::vector<float>{1, 1, 2, 2});
  const NodeAttrs linear{{"mode", std::string("linear")}};
  Tensor up = call(node("Resize", linear), {ab, Tensor(), scales})[0];
  EXPECT_EQ(up.dim(), 5);
  EXPECT_LT(rel_diff(nchw(up), interpolate(a, {.size = {14, 12}, .scale_factor = {}, .mode = "bilinear"})), 1e-6);
  Tensor near = call(node("Resize", {{"mode", std::string("nearest")}}), {ab, Tensor(), scales})[0];
  EXPECT_EQ(near.dim(), 4);
  EXPECT_LT(rel_diff(near, interpolate(a, {.size = {14, 12}, .scale_factor = {}})), 1e-6);
}

// ---- the pipeline ----------------------------------------------------------------------------

TEST(FusionPasses, OptimizeLevelTwoFusesAndLevelOneDoesNot) {
  Generator gen(19);
  Tensor x = randn({1, 8, 9, 9}, DType::Float32, &gen);
  Graph g1 = conv_act_graph("hardswish_affine"), g2 = conv_act_graph("hardswish_affine");
  Tensor before = run(g1, {x})[0];
  optimize(g1, {1});
  optimize(g2, {2});
  EXPECT_EQ(count_ops(g1, "skiff.FusedConv"), 0u);
  ASSERT_EQ(g2.nodes.size(), 1u);
  EXPECT_EQ(chain_names(g2.nodes[0]), (std::vector<std::string>{"hardswish", "linear"}));
  EXPECT_LT(rel_diff(run(g2, {x})[0], before), 1e-5);
}

// The fused ops run through the predictor on 1, 2 and 3 threads (checked to take effect),
// with repeated calls (cached plans/weights), on an input large enough for the parallel
// paths; every run matches the unfused graph, and repeated runs at one count are identical.
TEST(FusionPasses, FusedConvGivesTheSameResultsOnSeveralThreads) {
  Generator gen(20);
  Tensor x = randn({2, 8, 48, 40}, DType::Float32, &gen);  // 30720 per image, 61440 elements per tensor
  Tensor before;
  {
    testutil::ScopedNumThreads one(1);
    before = run(conv_act_graph("hardswish_affine"), {x})[0];
  }
  engine::Predictor p(conv_act_graph("hardswish_affine"));
  ASSERT_EQ(count_ops(p.graph(), "skiff.FusedConv"), 1u);
  const int previous = num_threads();
  std::vector<Tensor> first;
  for (int n : {1, 2, 3}) {
    testutil::ScopedNumThreads threads(n);
    ASSERT_EQ(num_threads(), n);
    if (testutil::mixed_openmp_runtimes()) GTEST_SKIP() << "two OpenMP runtimes in this process (clang build)";
    ASSERT_EQ(testutil::parallel_team_size(), n) << "set_num_threads(" << n << ") did not reach OpenMP";
    for (int i = 0; i < 3; ++i) {
      Tensor y = p.run(std::vector<Tensor>{x})[0];
      EXPECT_LT(rel_diff(y, before), 1e-5) << n << " threads, call " << i;
      if (i == 0) first.push_back(y);
      else EXPECT_EQ(amax(abs(sub(y, first.back()))).item<double>(), 0.0) << n << " threads, call " << i;
    }
  }
  EXPECT_EQ(num_threads(), previous) << "the thread count was not restored";
}

}  // namespace
}  // namespace skiff::graph
