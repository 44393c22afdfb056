// ONNX import and export: round trips, and bad files failing with clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "framework/engine/predictor.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/model_import.h"
#include "framework/graph/onnx_import.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "tests/framework/graph/graph_builder.h"

namespace skiff::graph {
namespace {

using testing::GraphBuilder;
namespace fs = std::filesystem;

Graph small_conv_graph() {
  Generator gen(7);
  return GraphBuilder(13)
      .input("x", {-1, 3, -1, -1})
      .init("w", randn({4, 3, 3, 3}, DType::Float32, &gen))
      .init("b", randn({4}, DType::Float32, &gen))
      .init("shape", from_vector<int64_t>({0, -1}))
      .node("Conv", {"x", "w", "b"}, {"c"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})
      .node("Relu", {"c"}, {"r"})
      .node("Reshape", {"r", "shape"}, {"y"})
      .output("y")
      .build();
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(e.kind()) + ": " + e.full_message();
  }
  return "(no error)";
}

TEST(OnnxImportExport, RoundTripKeepsStructureAndOutputs) {
  Graph g = small_conv_graph();
  std::string bytes = export_onnx_bytes(g);  // passes onnx::checker
  Graph back = import_onnx_bytes(bytes, "roundtrip.onnx");
  ASSERT_EQ(back.nodes.size(), 3u);
  EXPECT_EQ(back.nodes[0].op_type, "Conv");
  EXPECT_EQ(back.nodes[0].attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(back.opset_version, 13);
  ASSERT_EQ(back.inputs.size(), 1u);
  EXPECT_FALSE(back.inputs[0].shape[0].known());
  EXPECT_EQ(back.inputs[0].shape[1].value, 3);
  EXPECT_EQ(back.parameter_count(), g.parameter_count());

  Generator gen(1);
  Tensor x = randn({2, 3, 5, 6}, DType::Float32, &gen);
  auto a = engine::Predictor(g, {0}).run(std::vector<Tensor>{x})[0];
  auto b = engine::Predictor(back, {0}).run(std::vector<Tensor>{x})[0];
  EXPECT_EQ(a.shape(), (Shape{2, 4 * 5 * 6}));
  EXPECT_EQ(amax(abs(sub(a, b))).item<double>(), 0.0);
  // Against the eager ops directly.
  Tensor ref = reshape(relu(conv2d(x, g.initializers.at("w"), g.initializers.at("b"), {1}, {1})), Shape{2, -1});
  EXPECT_LT(amax(abs(sub(a, ref))).item<double>(), 1e-6);
}

TEST(OnnxImportExport, ExportIsAtomicAndReadable) {
  fs::path dir = fs::temp_directory_path() / "skiff_graph_export_test";
  fs::create_directories(dir);
  fs::path file = dir / "m.onnx";
  export_onnx(small_conv_graph(), file.string());
  EXPECT_TRUE(fs::exists(file));
  size_t entries = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
  EXPECT_EQ(entries, 1u) << "temporary files left behind";
  Graph back = import_onnx(file.string());
  EXPECT_EQ(back.nodes.size(), 3u);
  fs::remove_all(dir);
}

// A directory names the model in it, as PaddleOCR's *_model_dir flags and `skiff export` use them.
TEST(OnnxImportExport, DirectoryNamesTheModelInside) {
  fs::path dir = fs::temp_directory_path() / "skiff_graph_model_dir_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string msg = error_of([&] { import_model(dir.string()); });
  EXPECT_EQ(msg.rfind("ValueError", 0), 0u) << msg;  // bad input, exit 2
  EXPECT_NE(msg.find("without a model"), std::string::npos) << msg;
  export_onnx(small_conv_graph(), (dir / "b.onnx").string());
  EXPECT_EQ(import_model(dir.string()).nodes.size(), 3u);  // the only .onnx file
  export_onnx(small_conv_graph(), (dir / "a.onnx").string());
  msg = error_of([&] { import_model(dir.string()); });
  EXPECT_NE(msg.find("a.onnx, b.onnx"), std::string::npos) << msg;
  export_onnx(small_conv_graph(), (dir / "inference.onnx").string());
  EXPECT_EQ(import_model(dir.string()).nodes.size(), 3u);  // inference.onnx wins
  fs::remove_all(dir);
}

TEST(OnnxImportExport, TruncatedFileIsBadInputNamingTheFile) {
  std::string bytes = export_onnx_bytes(small_conv_graph());
  for (size_t cut : {size_t(0), size_t(10), bytes.size() / 2, bytes.size() - 3}) {
    std::string msg = error_of([&] { import_onnx_bytes(bytes.substr(0, cut), "cut.onnx"); });
    EXPECT_NE(msg.find("cut.onnx"), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind("ValueError", 0), 0u) << msg;  // exit code 2: bad input
  }
  EXPECT_NE(error_of([] { import_onnx("/nonexistent/model.onnx"); }).find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(OnnxImportExport, RandomBytesNeverCrash) {
  std::string bytes = export_onnx_bytes(small_conv_graph());
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::string mutated = bytes;
    for (int k = 0; k < 8; ++k) mutated[rng() % mutated.size()] = char(rng());
    try {
      Graph g = import_onnx_bytes(mutated, "fuzz.onnx");
      engine::Predictor p(g, {0});
      (void)p;
    } catch (const Error&) {
      // Any skiff error is fine; a crash or another exception type is not.
    }
  }
}

TEST(OnnxImportExport, UnsupportedOpNamesNodeAndOp) {
  Graph g = GraphBuilder(13).input("x", {2}).node("Relu", {"x"}, {"r"}).node("Einsum", {"r"}, {"y"}).output("y").build();
  g.nodes[1].name = "mystery";
  std::string bytes = export_onnx_bytes(g, {.check = false});
  std::string msg = error_of([&] { import_onnx_bytes(bytes, "m.onnx"); });
  EXPECT_NE(msg.find("NotImplementedError"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mystery"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Einsum"), std::string::npos) << msg;
  // Inspection still works.
  Graph shown = import_onnx_bytes(bytes, "m.onnx", ".", {.require_supported_ops = false});
  EXPECT_EQ(shown.nodes.size(), 2u);
}

TEST(OnnxImportExport, OpsetOutOfRangeIsRejected) {
  Graph g = GraphBuilder(6).input("x", {2}).node("Relu", {"x"}, {"y"}).output("y").build();
  std::string msg = error_of([&] { import_onnx_bytes(export_onnx_bytes(g, {.check = false}), "old.onnx"); });
  EXPECT_NE(msg.find("opset 6"), std::string::npos) << msg;
}

TEST(OnnxImportExport, ValueUsedBeforeDefinitionIsRejected) {
  Graph g;
  g.opset_version = 13;
  g.inputs.push_back({"x", DType::Float32, true, {Dim::fixed(2)}});
  g.outputs.push_back({"y", DType::Float32, false, {}});
  g.nodes.push_back(Node{"second", "Relu", "", {"mid"}, {"y"}, {}});
  g.nodes.push_back(Node{"first", "Relu", "", {"x"}, {"mid"}, {}});
  std::string msg = error_of([&] { import_onnx_bytes(export_onnx_bytes(g, {.check = false}), "order.onnx"); });
  EXPECT_NE(msg.find("second"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mid"), std::string::npos) << msg;
}

TEST(OnnxImportExport, CheckerRejectionIsAValueError) {
  // Conv with a missing weight input violates the schema.
  Graph g = GraphBuilder(13).input("x", {1, 1, 3, 3}).node("Conv", {"x"}, {"y"}).output("y").build();
  EXPECT_NE(error_of([&] { export_onnx_bytes(g); }).find("checker"), std::string::npos);
}

TEST(OnnxImportExport, PredictorChecksInputs) {
  engine::Predictor p(small_conv_graph());
  std::string msg = error_of([&] { p.run(std::vector<Tensor>{zeros({1, 4, 5, 5})}); });
  EXPECT_NE(msg.find("ShapeError"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  msg = error_of([&] { p.run(std::vector<Tensor>{zeros({1, 3, 5, 5}, DType::Float64)}); });
  EXPECT_NE(msg.find("TypeError"), std::string::npos) << msg;
  msg = error_of([&] { p.run(std::unordered_map<std::string, Tensor>{{"z", zeros({1, 3, 5, 5})}}); });
  EXPECT_NE(msg.find("'x' is missing"), std::string::npos) << msg;
}

TEST(OnnxImportExport, RuntimeErrorsNameTheNode) {
  Graph g = GraphBuilder(13)
                .input("x", {-1, -1})
                .init("shape", from_vector<int64_t>({7, -1}))
                .node("Reshape", {"x", "shape"}, {"y"})
                .output("y")
                .build();
  engine::Predictor p(g);
  std::string msg = error_of([&] { p.run(std::vector<Tensor>{zeros({2, 3})}); });
  EXPECT_NE(msg.find("Reshape_0"), std::string::npos) << msg;
}

}  // namespace
}  // namespace skiff::graph
