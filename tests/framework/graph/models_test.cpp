// The real PP-OCRv4 detector, recognizer and orientation classifier through the
// Predictor, compared with ONNX Runtime 1.30.0's outputs on the same inputs
// (fixtures made by tests/tools/ort/make_fixtures.mjs), at several input shapes, and
// concurrent first use of a shape. Pulls the models from
// the zoo on first use, hence the "network" label.
#include <gtest/gtest.h>

#include <string>

#include "framework/engine/predictor.h"
#include "framework/io/safetensors.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "framework/zoo/zoo.h"
#include "tests/framework/graph/concurrent_runs.h"

namespace skiff::engine {
namespace {

struct ModelCase {
  const char* zoo_name;
  const char* file;
  const char* fixture;
  const char* shapes_fixture;  // more input shapes: "case<i>.input.<name>", "case<i>.output.<name>"
};

constexpr ModelCase kDet{"ppocr-v4-det", "ch_PP-OCRv4_det_infer.onnx", "det_ppocrv4.safetensors",
                         "det_ppocrv4_shapes.safetensors"};
constexpr ModelCase kRec{"ppocr-v4-rec", "ch_PP-OCRv4_rec_infer.onnx", "rec_ppocrv4.safetensors",
                         "rec_ppocrv4_shapes.safetensors"};
constexpr ModelCase kCls{"ppocr-mobile-v2-cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "cls_ppocr_mobile_v2.safetensors",
                         "cls_ppocr_mobile_v2_shapes.safetensors"};

io::SafetensorsFile fixture(const ModelCase& m, bool shapes = false) {
  return io::load_safetensors(std::string(SKIFF_SOURCE_DIR) + "/tests/data/ort/" + (shapes ? m.shapes_fixture : m.fixture));
}

const Predictor& predictor(const ModelCase& m) {
  static std::map<std::string, std::unique_ptr<Predictor>> cache;
  auto& p = cache[m.zoo_name];
  if (!p) p = std::make_unique<Predictor>(zoo::fetch_file(m.zoo_name, m.file).string());
  return *p;
}

double max_abs_diff(const Tensor& a, const Tensor& b) { return amax(abs(sub(a, b))).item<double>(); }

void expect_matches_onnxruntime(const ModelCase& m, double tolerance) {
  auto fx = fixture(m);
  const Predictor& p = predictor(m);
  std::unordered_map<std::string, Tensor> feeds;
  for (const auto& in : p.inputs()) feeds[in.name] = fx.tensors.at("input." + in.name);
  auto outs = p.run(feeds);
  for (const auto& out : p.outputs()) {
    const Tensor& expected = fx.tensors.at("output." + out.name);
    const Tensor& got = outs.at(out.name);
    ASSERT_EQ(got.shape(), expected.shape()) << m.file << " output " << out.name;
    double diff = max_abs_diff(got, expected);
    EXPECT_LE(diff, tolerance) << m.file << " output " << out.name;
    std::printf("%s %s: max |skiff - onnxruntime| = %.3g\n", m.zoo_name, out.name.c_str(), diff);
  }
}

TEST(PPOCRModels, DetectorMatchesOnnxRuntime) { expect_matches_onnxruntime(kDet, 1e-4); }
TEST(PPOCRModels, RecognizerMatchesOnnxRuntime) { expect_matches_onnxruntime(kRec, 1e-4); }
TEST(PPOCRModels, ClassifierMatchesOnnxRuntime) { expect_matches_onnxruntime(kCls, 1e-4); }

// The same models at other batch sizes, heights and widths (the *_shapes fixtures).
void expect_matches_onnxruntime_at_other_shapes(const ModelCase& m, double tolerance) {
  auto fx = fixture(m, true);
  const Predictor& p = predictor(m);
  int cases = 0;
  for (;; ++cases) {
    const std::string prefix = "case" + std::to_string(cases) + ".";
    std::unordered_map<std::string, Tensor> feeds;
    for (const auto& in : p.inputs())
      if (auto it = fx.tensors.find(prefix + "input." + in.name); it != fx.tensors.end()) feeds[in.name] = it->second;
    if (feeds.empty()) break;
    SCOPED_TRACE(feeds.begin()->second.shape().str());
    auto outs = p.run(feeds);
    for (const auto& out : p.outputs()) {
      const Tensor& expected = fx.tensors.at(prefix + "output." + out.name);
      const Tensor& got = outs.at(out.name);
      ASSERT_EQ(got.shape(), expected.shape()) << m.file << " output " << out.name;
      double diff = max_abs_diff(got, expected);
      EXPECT_LE(diff, tolerance) << m.file << " output " << out.name;
      std::printf("%s %s %s: max |skiff - onnxruntime| = %.3g\n", m.zoo_name, feeds.begin()->second.shape().str().c_str(),
                  out.name.c_str(), diff);
    }
  }
  EXPECT_GE(cases, 2) << m.shapes_fixture;
}

TEST(PPOCRModels, DetectorMatchesOnnxRuntimeAtOtherShapes) { expect_matches_onnxruntime_at_other_shapes(kDet, 1e-4); }
TEST(PPOCRModels, RecognizerMatchesOnnxRuntimeAtOtherShapes) { expect_matches_onnxruntime_at_other_shapes(kRec, 1e-4); }
TEST(PPOCRModels, ClassifierMatchesOnnxRuntimeAtOtherShapes) { expect_matches_onnxruntime_at_other_shapes(kCls, 1e-4); }

// Eight threads make the first-ever call of a new input shape at the same moment (no
// warm-up); every result equals the single-threaded one made afterwards.
void expect_concurrent_first_use_agrees(const ModelCase& m, const Shape& shape) {
  const Predictor& p = predictor(m);
  Generator gen(77);
  const Tensor x = randn(shape, DType::Float32, &gen);
  constexpr int kThreads = 8;
  auto runs = graph::testing::run_concurrently(p, x, kThreads);
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(runs.errors[size_t(i)].empty()) << "thread " << i << ": " << runs.errors[size_t(i)];
    EXPECT_EQ(max_abs_diff(runs.outputs[size_t(i)], runs.serial), 0.0) << m.zoo_name << " thread " << i;
  }
}

// Shapes no other test here uses, so each is a first use.
TEST(PPOCRModels, RecognizerConcurrentFirstUseOfAShape) { expect_concurrent_first_use_agrees(kRec, {1, 3, 48, 136}); }
TEST(PPOCRModels, DetectorConcurrentFirstUseOfAShape) { expect_concurrent_first_use_agrees(kDet, {1, 3, 160, 96}); }

TEST(PPOCRModels, OptimisationLeavesDetectorOutputUnchanged) {
  auto fx = fixture(kDet);
  Predictor plain(zoo::fetch_file(kDet.zoo_name, kDet.file).string(), {0});
  const Predictor& optimized = predictor(kDet);
  EXPECT_LT(optimized.num_steps(), plain.num_steps());
  Tensor x = fx.tensors.at("input.x");
  EXPECT_LT(max_abs_diff(plain.run(std::vector<Tensor>{x})[0], optimized.run(std::vector<Tensor>{x})[0]), 1e-4);
}

TEST(PPOCRModels, DynamicShapesAndConcurrentRuns) {
  const Predictor& rec = predictor(kRec);
  Generator gen(9);
  std::vector<Tensor> inputs;
  for (int64_t w : {64, 160, 320, 96}) inputs.push_back(randn({2, 3, 48, w}, DType::Float32, &gen));
  std::vector<Tensor> serial;
  for (const auto& x : inputs) {
    serial.push_back(rec.run(std::vector<Tensor>{x})[0]);
    EXPECT_EQ(serial.back().shape(), (Shape{2, x.size(3) / 8, 6625}));
  }
  std::vector<Tensor> parallel(inputs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < inputs.size(); ++i)
    threads.emplace_back([&, i] { parallel[i] = rec.run(std::vector<Tensor>{inputs[i]})[0]; });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ(max_abs_diff(serial[i], parallel[i]), 0.0) << "input " << i;
}

}  // namespace
}  // namespace skiff::engine
