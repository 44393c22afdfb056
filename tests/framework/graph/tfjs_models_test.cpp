// The real NanoDet TF.js graph model (zoo: nanodet-coco) through the importer
// and the Predictor, compared with TensorFlow.js 4.22.0's CPU backend on a fixed
// input (fixture made by tests/tools/tfjs/make_fixtures.mjs), as imported, as
// optimised, and after an ONNX export round trip. Pulls the model from the zoo
// on first use, hence the "network" label.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "framework/engine/predictor.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/onnx_import.h"
#include "framework/graph/passes.h"
#include "framework/graph/tfjs_import.h"
#include "framework/io/safetensors.h"
#include "framework/ops/ops.h"
#include "framework/zoo/zoo.h"

namespace skiff::graph {
namespace {

/// The input make_fixtures.mjs feeds TF.js: integer hashing, floats in [-2, 2).
Tensor fixed_input(const Shape& shape) {
  std::vector<float> v(size_t(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t h = uint32_t(i) * 2654435761u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    v[i] = float(h & 0xffffff) / 16777216.f * 4.f - 2.f;
  }
  return from_vector(v, shape);
}

// The whole model: the graph file names its weight shard, so fetching nanodet.json alone
// failed on a fresh cache unless another test had pulled the model first.
std::string nanodet_path() { return (zoo::ensure_model("nanodet-coco").dir / "nanodet.json").string(); }

io::SafetensorsFile tfjs_outputs() {
  return io::load_safetensors(std::string(SKIFF_SOURCE_DIR) + "/tests/data/tfjs/nanodet_outputs.safetensors");
}

void expect_matches_tfjs(const engine::Predictor& p, const char* what) {
  auto fx = tfjs_outputs();
  auto outs = p.run({{"input_1", fixed_input({1, 3, 416, 416})}});
  ASSERT_EQ(outs.size(), 6u);
  for (const auto& [name, expected] : fx.tensors) {
    ASSERT_TRUE(outs.count(name)) << what << ": no output " << name;
    const Tensor& got = outs.at(name);
    ASSERT_EQ(got.shape(), expected.shape()) << what << " " << name;
    double diff = amax(abs(sub(got, expected))).item<double>();
    EXPECT_LE(diff, 1e-4) << what << " " << name;
    std::printf("%s %s: max |skiff - tfjs| = %.3g\n", what, name.c_str(), diff);
  }
}

TEST(TfjsModels, NanoDetAsImportedMatchesTfjs) {
  engine::Predictor p(import_tfjs(nanodet_path()), engine::PredictorOptions{0});
  expect_matches_tfjs(p, "as imported");
}

TEST(TfjsModels, NanoDetOptimisedMatchesTfjsWithoutTheLayoutTransposes) {
  engine::Predictor p(nanodet_path());
  expect_matches_tfjs(p, "optimised");
  // 161 transposes as imported; the 6 left turn the heads' outputs into [1, N, C].
  int transposes = 0;
  for (const auto& n : p.graph().nodes) transposes += n.op_type == "Transpose";
  EXPECT_EQ(transposes, 6);
}

TEST(TfjsModels, NanoDetSurvivesAnOnnxRoundTrip) {
  Graph g = import_tfjs(nanodet_path());
  optimize(g, OptimizeOptions{1});
  auto path = std::filesystem::temp_directory_path() / "skiff_nanodet_roundtrip.onnx";
  export_onnx(g, path.string());
  engine::Predictor p(import_onnx(path.string()));
  std::filesystem::remove(path);
  expect_matches_tfjs(p, "onnx round trip");
}

}  // namespace
}  // namespace skiff::graph
