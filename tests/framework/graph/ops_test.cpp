// ONNX op semantics that differ from skiff's eager ops (opset switches, index
// conventions, padding orders, coordinate modes), checked on hand-computed values.
#include <gtest/gtest.h>

#include "framework/graph/op_registry.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"

namespace skiff::graph {
namespace {

std::vector<Tensor> run1(const std::string& op, std::vector<Tensor> inputs, std::map<std::string, AttrValue> attrs = {},
                         int64_t opset = 13, size_t outputs = 1) {
  Node n;
  n.name = "n";
  n.op_type = op;
  n.attrs = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) n.inputs.push_back(inputs[i].defined() ? "in" + std::to_string(i) : "");
  for (size_t i = 0; i < outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
  return run_node(n, inputs, opset);
}

std::vector<float> floats(const Tensor& t) { return to(t, DType::Float32).to_vector<float>(); }
std::vector<int64_t> ints(const Tensor& t) { return to(t, DType::Int64).to_vector<int64_t>(); }
Tensor i64(std::vector<int64_t> v) { return from_vector(v); }
Tensor f32(std::vector<float> v, Shape s) { return from_vector(v, s); }

TEST(GraphOps, ReshapeCopiesZeroDimsAndInfersMinusOne) {
  Tensor x = zeros({2, 3, 4});
  EXPECT_EQ(run1("Reshape", {x, i64({0, -1})})[0].shape(), (Shape{2, 12}));
  EXPECT_EQ(run1("Reshape", {x, i64({-1, 0, 2})})[0].shape(), (Shape{4, 3, 2}));
}

TEST(GraphOps, SliceClampsAndSupportsNegativeSteps) {
  Tensor x = from_vector<float>({0, 1, 2, 3, 4, 5});
  EXPECT_EQ(floats(run1("Slice", {x, i64({1}), i64({100})})[0]), (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(floats(run1("Slice", {x, i64({-2}), i64({6})})[0]), (std::vector<float>{4, 5}));
  EXPECT_EQ(floats(run1("Slice", {x, i64({5}), i64({-100}), i64({0}), i64({-2})})[0]), (std::vector<float>{5, 3, 1}));
  // Opset 9 takes starts/ends/axes as attributes.
  auto y = run1("Slice", {x}, {{"starts", std::vector<int64_t>{2}}, {"ends", std::vector<int64_t>{4}},
                               {"axes", std::vector<int64_t>{0}}}, 9)[0];
  EXPECT_EQ(floats(y), (std::vector<float>{2, 3}));
}

TEST(GraphOps, GatherTakesNegativeAndNdIndices) {
  Tensor x = f32({0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor idx = from_vector<int64_t>({-1, 0, 1, -1}, Shape{2, 2});
  Tensor y = run1("Gather", {x, idx}, {{"axis", int64_t(0)}})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(floats(y), (std::vector<float>{4, 5, 0, 1, 2, 3, 4, 5}));
  Tensor scalar_idx = scalar_tensor(1, DType::Int64);
  EXPECT_EQ(run1("Gather", {x, scalar_idx}, {{"axis", int64_t(1)}})[0].shape(), (Shape{3}));
  EXPECT_THROW(run1("Gather", {x, i64({3})}), IndexError);
}

TEST(GraphOps, PadUsesOnnxOrderBeginsThenEnds) {
  Tensor x = f32({1, 2, 3, 4}, {2, 2});
  // [x1_begin, x2_begin, x1_end, x2_end] = one row on top, two columns on the right.
  Tensor y = run1("Pad", {x, i64({1, 0, 0, 2}), scalar_tensor(9.0)})[0];
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  EXPECT_EQ(floats(y), (std::vector<float>{9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9}));
  Tensor e = run1("Pad", {x, i64({0, 1, 0, 0})}, {{"mode", std::string("edge")}})[0];
  EXPECT_EQ(floats(e), (std::vector<float>{1, 1, 2, 3, 3, 4}));
}

TEST(GraphOps, ResizeNearestAsymmetricFloorAndHalfPixelRounding) {
  Tensor x = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor scales = from_vector<float>({1, 1, 2, 2});
  std::map<std::string, AttrValue> paddle{{"mode", std::string("nearest")},
                                          {"coordinate_transformation_mode", std::string("asymmetric")},
                                          {"nearest_mode", std::string("floor")}};
  Tensor y = run1("Resize", {x, Tensor(), scales}, paddle, 11)[0];
  EXPECT_EQ(floats(y), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // 3 -> 2 with half_pixel + round_prefer_floor: src = (o + .5) * 1.5 - .5 = 0.25, 1.75 -> 0, 2.
  Tensor row = f32({10, 20, 30}, {1, 1, 1, 3});
  Tensor sizes = from_vector<int64_t>({1, 1, 1, 2});
  Tensor z = run1("Resize", {row, Tensor(), Tensor(), sizes}, {{"mode", std::string("nearest")}}, 13)[0];
  EXPECT_EQ(floats(z), (std::vector<float>{10, 30}));
  // Linear half_pixel matches bilinear (align_corners=false).
  Tensor lin = run1("Resize", {x, Tensor(), scales}, {{"mode", std::string("linear")}}, 13)[0];
  EXPECT_NEAR(floats(lin)[1], 1.25f, 1e-6);  // (0, 1): src x = 0.25 -> 1 + 0.25
}

TEST(GraphOps, SoftmaxBeforeOpset13CoercesTo2D) {
  Tensor x = f32({0, 0, 0, 0}, {1, 2, 2});
  // axis=1 with opset 11: softmax over the flattened [2*2] -> every value 1/4.
  auto old = floats(run1("Softmax", {x}, {{"axis", int64_t(1)}}, 11)[0]);
  for (float v : old) EXPECT_FLOAT_EQ(v, 0.25f);
  auto now = floats(run1("Softmax", {x}, {{"axis", int64_t(1)}}, 13)[0]);
  for (float v : now) EXPECT_FLOAT_EQ(v, 0.5f);
}

TEST(GraphOps, ConvAsymmetricPaddingEqualsExplicitPad) {
  Generator gen(3);
  Tensor x = randn({1, 2, 5, 5}, DType::Float32, &gen), w = randn({3, 2, 2, 2}, DType::Float32, &gen);
  Tensor y = run1("Conv", {x, w}, {{"pads", std::vector<int64_t>{0, 0, 1, 1}}})[0];
  Tensor ref = conv2d(pad(x, {0, 1, 0, 1}), w);
  EXPECT_EQ(y.shape(), ref.shape());
  EXPECT_LT(amax(abs(sub(y, ref))).item<double>(), 1e-6);
  Tensor same = run1("Conv", {x, w}, {{"auto_pad", std::string("SAME_UPPER")}})[0];
  EXPECT_EQ(same.shape(), (Shape{1, 3, 5, 5}));
}

TEST(GraphOps, ClipAttributeAndInputForms) {
  Tensor x = from_vector<float>({-2, 0.5f, 9});
  EXPECT_EQ(floats(run1("Clip", {x}, {{"min", 0.0f}, {"max", 6.0f}}, 9)[0]), (std::vector<float>{0, 0.5f, 6}));
  EXPECT_EQ(floats(run1("Clip", {x, scalar_tensor(-1.0), Tensor()}, {}, 13)[0]), (std::vector<float>{-1, 0.5f, 9}));
}

TEST(GraphOps, HardSigmoidUsesAlphaBeta) {
  Tensor x = from_vector<float>({-10, 0, 1, 10});
  auto y = floats(run1("HardSigmoid", {x}, {{"alpha", 0.2f}, {"beta", 0.5f}})[0]);
  EXPECT_EQ(y, (std::vector<float>{0, 0.5f, 0.7f, 1}));
}

TEST(GraphOps, IntegerDivTruncatesTowardZero) {
  EXPECT_EQ(ints(run1("Div", {i64({7, -7}), i64({2, 2})})[0]), (std::vector<int64_t>{3, -3}));
}

TEST(GraphOps, SplitSqueezeUnsqueezeAcrossOpsets) {
  Tensor x = zeros({1, 6, 1});
  auto parts = run1("Split", {x, i64({2, 4})}, {{"axis", int64_t(1)}}, 13, 2);
  EXPECT_EQ(parts[0].shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(parts[1].shape(), (Shape{1, 4, 1}));
  auto even = run1("Split", {x}, {{"axis", int64_t(1)}}, 11, 3);
  EXPECT_EQ(even[2].shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(run1("Squeeze", {x}, {{"axes", std::vector<int64_t>{0}}}, 11)[0].shape(), (Shape{6, 1}));
  EXPECT_EQ(run1("Squeeze", {x, i64({-1})}, {}, 13)[0].shape(), (Shape{1, 6}));
  EXPECT_EQ(run1("Unsqueeze", {zeros({3}), i64({0, -1})}, {}, 13)[0].shape(), (Shape{1, 3, 1}));
  EXPECT_THROW(run1("Squeeze", {x, i64({1})}, {}, 13), ShapeError);
}

TEST(GraphOps, ShapeExpandTileRangeConstantOfShape) {
  Tensor x = zeros({2, 1, 3});
  EXPECT_EQ(ints(run1("Shape", {x})[0]), (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(ints(run1("Shape", {x}, {{"start", int64_t(-2)}}, 15)[0]), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(run1("Expand", {x, i64({4, 1})})[0].shape(), (Shape{2, 4, 3}));
  Tensor t = run1("Tile", {f32({1, 2}, {1, 2}), i64({2, 2})})[0];
  EXPECT_EQ(floats(t), (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(ints(run1("Range", {scalar_tensor(1, DType::Int64), scalar_tensor(7, DType::Int64),
                                scalar_tensor(2, DType::Int64)})[0]), (std::vector<int64_t>{1, 3, 5}));
  Tensor fill = run1("ConstantOfShape", {i64({2, 2})}, {{"value", full({1}, 3.0, DType::Int64)}})[0];
  EXPECT_EQ(fill.dtype(), DType::Int64);
  EXPECT_EQ(ints(fill), (std::vector<int64_t>{3, 3, 3, 3}));
}

TEST(GraphOps, ReduceTopKArgMaxLayerNorm) {
  Tensor x = f32({1, 5, 3, 4, 2, 6}, {2, 3});
  EXPECT_EQ(floats(run1("ReduceMean", {x}, {{"axes", std::vector<int64_t>{1}}}, 13)[0]), (std::vector<float>{3, 4}));
  EXPECT_EQ(run1("ReduceSum", {x, i64({1})}, {{"keepdims", int64_t(0)}}, 13)[0].shape(), (Shape{2}));
  auto topk = run1("TopK", {x, i64({2})}, {}, 13, 2);
  EXPECT_EQ(floats(topk[0]), (std::vector<float>{5, 3, 6, 4}));
  EXPECT_EQ(ints(topk[1]), (std::vector<int64_t>{1, 2, 2, 0}));
  EXPECT_EQ(ints(run1("ArgMax", {x}, {{"axis", int64_t(1)}, {"keepdims", int64_t(0)}})[0]), (std::vector<int64_t>{1, 2}));
  auto ln = floats(run1("LayerNormalization", {x, ones({3}), zeros({3})}, {{"epsilon", 0.0f}}, 17)[0]);
  EXPECT_NEAR(ln[0] + ln[1] + ln[2], 0.0, 1e-5);
}

TEST(GraphOps, GemmTransposesAndScales) {
  Tensor a = f32({1, 2, 3, 4}, {2, 2}), b = f32({1, 0, 0, 1}, {2, 2});
  Tensor y = run1("Gemm", {a, b, from_vector<float>({1, 1})},
                  {{"transA", int64_t(1)}, {"alpha", 2.0f}, {"beta", 0.5f}})[0];
  EXPECT_EQ(floats(y), (std::vector<float>{2.5f, 6.5f, 4.5f, 8.5f}));
}

TEST(GraphOps, MissingRequiredInputIsAnError) {
  EXPECT_THROW(run1("Add", {from_vector<float>({1}), Tensor()}), ValueError);
}

}  // namespace
}  // namespace skiff::graph
