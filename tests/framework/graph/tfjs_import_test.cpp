// The TF.js graph-model importer, op by op, on small models written here
// (model.json + one weight shard) with hand-computed expected values, and the
// errors a bad file gets.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/core/half.h"
#include "framework/engine/predictor.h"
#include "framework/graph/tfjs_import.h"
#include "framework/ops/ops.h"

namespace skiff::graph {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string base64(const std::string& s) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : s) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) out.push_back(k[(acc >> (bits -= 6)) & 63]);
  }
  if (bits) out.push_back(k[(acc << (6 - bits)) & 63]);
  while (out.size() % 4) out.push_back('=');
  return out;
}

json s_attr(const std::string& v) { return {{"s", base64(v)}}; }
json ints_attr(std::vector<int64_t> v) {
  json list = json::array();
  for (auto x : v) list.push_back(std::to_string(x));
  return {{"list", {{"i", list}}}};
}

/// Builds a TF.js model in a temp directory: nodes, float32 / int32 constants, one shard.
class ModelWriter {
 public:
  explicit ModelWriter(const std::string& name) : dir_(fs::temp_directory_path() / ("skiff_tfjs_" + name)) {
    fs::create_directories(dir_);
  }
  ~ModelWriter() { fs::remove_all(dir_); }

  void input(const std::string& name, std::vector<int64_t> shape) {
    json dims = json::array();
    for (auto d : shape) dims.push_back({{"size", std::to_string(d)}});
    nodes_.push_back({{"name", name}, {"op", "Placeholder"},
                      {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}, {"shape", {{"shape", {{"dim", dims}}}}}}}});
  }
  void floats(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    add_const(name, shape, "float32", "DT_FLOAT", std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  }
  void int32s(const std::string& name, std::vector<int64_t> shape, const std::vector<int32_t>& v,
              const char* tf_type = "DT_INT32") {
    add_const(name, shape, "int32", tf_type, std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  }
  /// A float32 constant stored quantized (uint8 affine or float16).
  void quantized(const std::string& name, std::vector<int64_t> shape, const std::string& qtype, const std::string& bytes,
                 float min = 0, float scale = 1) {
    json q = {{"dtype", qtype}, {"original_dtype", "float32"}};
    if (qtype != "float16") q["min"] = min, q["scale"] = scale;
    add_const(name, shape, "float32", "DT_FLOAT", bytes, q);
  }
  void node(const std::string& name, const std::string& op, std::vector<std::string> inputs, json attr = json::object()) {
    nodes_.push_back({{"name", name}, {"op", op}, {"input", inputs}, {"attr", attr}});
  }
  void output(const std::string& name) { outputs_.push_back(name); }
  /// Writes the files; returns the model.json path.
  std::string write(size_t truncate_bin = 0) {
    json sig_out = json::object();
    for (const auto& o : outputs_) sig_out[o + ":0"] = {{"name", o + ":0"}, {"dtype", "DT_FLOAT"}};
    json model = {{"format", "graph-model"},
                  {"modelTopology", {{"node", nodes_}}},
                  {"signature", {{"outputs", sig_out}}},
                  {"weightsManifest", json::array({{{"paths", {"weights.bin"}}, {"weights", weights_}}})}};
    std::ofstream(dir_ / "model.json") << model.dump();
    std::ofstream(dir_ / "weights.bin", std::ios::binary) << bin_.substr(0, bin_.size() - truncate_bin);
    return (dir_ / "model.json").string();
  }

 private:
  void add_const(const std::string& name, std::vector<int64_t> shape, const std::string& dtype, const std::string& tf_type,
                 const std::string& bytes, json quantization = nullptr) {
    json w = {{"name", name}, {"shape", shape}, {"dtype", dtype}};
    if (!quantization.is_null()) w["quantization"] = quantization;
    weights_.push_back(w);
    bin_ += bytes;
    nodes_.push_back({{"name", name}, {"op", "Const"}, {"attr", {{"dtype", {{"type", tf_type}}}}}});
  }
  fs::path dir_;
  json nodes_ = json::array(), weights_ = json::array();
  std::vector<std::string> outputs_;
  std::string bin_;
};

std::vector<float> run1(const std::string& model, const Tensor& x, Shape* shape = nullptr, int level = 2) {
  engine::Predictor p(import_tfjs(model), engine::PredictorOptions{level});
  auto outs = p.run({{"x", x}});
  const Tensor& y = outs.at(p.outputs()[0].name);
  if (shape) *shape = y.shape();
  return contiguous(y).to_vector<float>();
}

Tensor nhwc(std::vector<float> v, Shape shape) { return from_vector(v, shape); }

TEST(TfjsImport, Conv2DNhwcValidOneByOne) {
  ModelWriter m("conv1x1");
  m.input("x", {1, 2, 2, 2});
  m.floats("w", {1, 1, 2, 1}, {1.f, 10.f});  // HWIO: y = x0 + 10 x1
  m.node("y", "Conv2D", {"x", "w"},
         {{"padding", s_attr("VALID")}, {"strides", ints_attr({1, 1, 1, 1})}, {"data_format", s_attr("NHWC")}});
  m.output("y");
  Shape s;
  for (int level : {0, 2}) {
    auto y = run1(m.write(), nhwc({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2}), &s, level);
    EXPECT_EQ(s, Shape({1, 2, 2, 1}));
    EXPECT_EQ(y, (std::vector<float>{21, 43, 65, 87})) << "level " << level;
  }
}

TEST(TfjsImport, FusedConvSamePaddingBiasAndRelu6) {
  ModelWriter m("fused");
  m.input("x", {1, 3, 3, 1});
  m.floats("w", {3, 3, 1, 1}, std::vector<float>(9, 1.f));
  m.floats("b", {1}, {-1.f});
  json ops = {{"list", {{"s", {base64("BiasAdd"), base64("Relu6")}}}}};
  m.node("y", "_FusedConv2D", {"x", "w", "b"},
         {{"padding", s_attr("SAME")}, {"strides", ints_attr({1, 1, 1, 1})}, {"fused_ops", ops}, {"num_args", {{"i", "1"}}}});
  m.output("y");
  // Window sums of ones: 4 at corners, 6 on edges, 9 in the centre; minus 1; clipped at 6.
  EXPECT_EQ(run1(m.write(), ones({1, 3, 3, 1})), (std::vector<float>{3, 5, 3, 5, 6, 5, 3, 5, 3}));
}

TEST(TfjsImport, DepthwiseConvOrdersChannelsAsTensorFlow) {
  ModelWriter m("dw");
  m.input("x", {1, 1, 1, 2});
  m.floats("w", {1, 1, 2, 2}, {1.f, 2.f, 3.f, 4.f});  // [H, W, C, M]: channel c, multiplier m -> output c * M + m
  m.node("y", "DepthwiseConv2dNative", {"x", "w"}, {{"padding", s_attr("VALID")}, {"strides", ints_attr({1, 1, 1, 1})}});
  m.output("y");
  EXPECT_EQ(run1(m.write(), nhwc({10, 100}, {1, 1, 1, 2})), (std::vector<float>{10, 20, 300, 400}));
}

TEST(TfjsImport, MaxPoolSameAndPadV2) {
  ModelWriter m("pool");
  m.input("x", {1, 3, 3, 1});
  m.int32s("p", {4, 2}, {0, 0, 1, 0, 0, 0, 0, 0});
  m.floats("c", {}, {-5.f});
  m.node("padded", "PadV2", {"x", "p", "c"});  // a row of -5 on top: 4 x 3
  m.node("y", "MaxPool", {"padded"},
         {{"padding", s_attr("SAME")}, {"ksize", ints_attr({1, 2, 2, 1})}, {"strides", ints_attr({1, 2, 2, 1})}});
  m.output("y");
  Shape s;
  auto y = run1(m.write(), nhwc({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1}), &s);
  EXPECT_EQ(s, Shape({1, 2, 2, 1}));
  // Rows: [-5 -5 -5], [1 2 3], [4 5 6], [7 8 9]; SAME pads the right column.
  EXPECT_EQ(y, (std::vector<float>{2, 3, 8, 9}));
}

TEST(TfjsImport, ResizeBilinearHalfPixelCentres) {
  ModelWriter m("resize");
  m.input("x", {1, 1, 2, 1});
  m.int32s("size", {2}, {1, 4});
  m.node("y", "ResizeBilinear", {"x", "size"}, {{"half_pixel_centers", {{"b", true}}}, {"align_corners", {{"b", false}}}});
  m.output("y");
  // Source coordinates (i + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, clamped to [0, 1].
  EXPECT_EQ(run1(m.write(), nhwc({0, 4}, {1, 1, 2, 1})), (std::vector<float>{0, 1, 3, 4}));
}

TEST(TfjsImport, QuantizedWeightsAreDequantized) {
  ModelWriter m("quant");
  m.input("x", {3});
  m.quantized("a", {3}, "uint8", std::string("\x00\x02\x04", 3), -1.f, 0.5f);  // -1, 0, 1
  std::string halves;
  for (float f : {0.5f, 1.5f, -2.f}) {
    Half h(f);
    halves.append(reinterpret_cast<const char*>(&h.bits), 2);
  }
  m.quantized("b", {3}, "float16", halves);
  m.node("ab", "AddV2", {"a", "b"});
  m.node("y", "Mul", {"x", "ab"});
  m.output("y");
  EXPECT_EQ(run1(m.write(), from_vector(std::vector<float>{1, 2, 3})), (std::vector<float>{-0.5f, 3.f, -3.f}));
}

TEST(TfjsImport, ShapeArithmeticOnConstantsIsFolded) {
  // The shape computation TF.js converters emit: base + SparseToDense(no indices) for Reshape.
  ModelWriter m("sparse");
  m.input("x", {2, 3});
  m.int32s("base", {2}, {3, 2}, "DT_INT64");
  m.int32s("where", {0, 1}, {}, "DT_INT64");
  m.int32s("dense_shape", {1}, {2}, "DT_INT64");
  m.int32s("values", {0}, {}, "DT_INT64");
  m.int32s("zero", {}, {0}, "DT_INT64");
  m.node("delta", "SparseToDense", {"where", "dense_shape", "values", "zero"});
  m.node("shape", "AddV2", {"base", "delta"});
  m.node("y", "Reshape", {"x", "shape"});
  m.output("y");
  Shape s;
  auto y = run1(m.write(), from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}), &s);
  EXPECT_EQ(s, Shape({3, 2}));
  Graph g = import_tfjs(m.write());
  EXPECT_TRUE(g.is_initializer("delta"));
}

TEST(TfjsImport, SplitVConcatV2AndSigmoid) {
  ModelWriter m("split");
  m.input("x", {1, 4});
  m.int32s("sizes", {2}, {1, 3});
  m.int32s("axis", {}, {1});
  m.node("parts", "SplitV", {"x", "sizes", "axis"}, {{"num_split", {{"i", "2"}}}});
  m.node("s", "Sigmoid", {"parts"});
  m.node("y", "ConcatV2", {"parts:1", "s", "axis"});
  m.output("y");
  auto y = run1(m.write(), from_vector(std::vector<float>{0, 1, 2, 3}, {1, 4}));
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, 0.5f}));
}

TEST(TfjsImport, NodesNeedNotBeInOrder) {
  ModelWriter m("order");
  m.node("y", "Relu", {"z"});  // uses z before the file defines it
  m.node("z", "Neg", {"x"});
  m.input("x", {2});
  m.output("y");
  EXPECT_EQ(run1(m.write(), from_vector(std::vector<float>{1, -2})), (std::vector<float>{0, 2}));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TfjsImport, ErrorsNameTheFileNodeAndOp) {
  ModelWriter m("errors");
  m.input("x", {2});
  m.node("y", "Conv3D", {"x"});
  m.output("y");
  std::string path = m.write();
  std::string e = error_of([&] { import_tfjs(path); });
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("node 'y' (Conv3D)"), std::string::npos) << e;
  EXPECT_NE(e.find("closest supported op: Conv2D"), std::string::npos) << e;
}

TEST(TfjsImport, TruncatedShardNamesTheWeight) {
  ModelWriter m("truncated");
  m.input("x", {2});
  m.floats("w", {2}, {1, 2});
  m.node("y", "Mul", {"x", "w"});
  m.output("y");
  std::string e = error_of([&] { import_tfjs(m.write(/*truncate_bin=*/3)); });
  EXPECT_NE(e.find("'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST(TfjsImport, MissingInputAndCyclesAreErrors) {
  ModelWriter m("cycle");
  m.input("x", {2});
  m.node("a", "Relu", {"b"});
  m.node("b", "Relu", {"a"});
  m.node("y", "Add", {"x", "a"});
  m.output("y");
  EXPECT_NE(error_of([&] { import_tfjs(m.write()); }).find("cycle"), std::string::npos);
  ModelWriter m2("missing");
  m2.input("x", {2});
  m2.node("y", "Relu", {"nowhere"});
  m2.output("y");
  EXPECT_NE(error_of([&] { import_tfjs(m2.write()); }).find("'nowhere' is produced by no node"), std::string::npos);
}

TEST(TfjsImport, NotAModel) {
  auto path = fs::temp_directory_path() / "skiff_tfjs_not_a_model.json";
  std::ofstream(path) << "{\"hello\": 1}";
  EXPECT_FALSE(is_tfjs_model(path.string()));
  EXPECT_NE(error_of([&] { import_tfjs(path.string()); }).find("not a TF.js model"), std::string::npos);
  std::ofstream(path) << "{ broken";
  EXPECT_NE(error_of([&] { import_tfjs(path.string()); }).find("not valid JSON"), std::string::npos);
  fs::remove(path);
}

}  // namespace
}  // namespace skiff::graph
