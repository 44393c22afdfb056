// skiff's ONNX exports run in ONNX Runtime 1.30 (tests/tools/ort/run_model.mjs),
// not in skiff's own importer: the CRNN recognizer and the DB detector exactly as
// `skiff export` writes them (Crnn/DbNet::inference_graph + export_onnx), and
// eager modules traced with graph::trace (CNN, Transformer layer, LSTM/GRU). Each
// input and the eager output are written to safetensors in a scratch directory,
// ORT runs the exported file on the input, and the outputs must agree within 1e-4
// (relative to the output's scale). A bug shared by skiff's exporter and importer
// passes the other export tests but not this one.
//
// Needs Node.js and `npm ci` in tests/tools/ort (setup.sh, run from here; needs the
// npm registry once): labelled `network` in CMake.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "framework/core/rng.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/trace.h"
#include "framework/io/safetensors.h"
#include "framework/nn/nn.h"
#include "framework/ops/nn/resample.h"
#include "framework/ops/ops.h"
#include "suites/ocr/train/det_model.h"
#include "suites/ocr/train/rec_model.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;

const fs::path kOrtTools = fs::path(SKIFF_SOURCE_DIR) / "tests/tools/ort";

class OrtExport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string cmd = fmt::format("'{}' >&2", (kOrtTools / "setup.sh").string());
    setup_ok_ = std::system(cmd.c_str()) == 0;
  }
  void SetUp() override {
    ASSERT_TRUE(setup_ok_) << "tests/tools/ort/setup.sh failed (needs node, npm and the npm registry once)";
    dir_ = fs::temp_directory_path() / fmt::format("skiff_ort_export_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);  // kept for a look when something differs
  }

  /// Writes `g` as ONNX, runs it in ORT on `x` (the graph's only input), compares with `eager`.
  void expect_ort_matches(const graph::Graph& g, const std::string& name, const std::vector<Tensor>& inputs,
                          const std::vector<Tensor>& eager, double tol = 1e-4) {
    fs::path model = dir_ / (name + ".onnx");
    graph::export_onnx(g, model.string());
    ASSERT_EQ(g.inputs.size(), 1u);
    ASSERT_EQ(inputs.size(), eager.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      SCOPED_TRACE(fmt::format("{} input {}", name, inputs[i].shape()));
      fs::path in = dir_ / fmt::format("{}_in{}.safetensors", name, i), out = dir_ / fmt::format("{}_out{}.safetensors", name, i);
      io::save_safetensors(in, {{g.inputs[0].name, inputs[i]}});
      io::save_safetensors(dir_ / fmt::format("{}_eager{}.safetensors", name, i), {{"eager", eager[i]}});
      std::string cmd = fmt::format("node '{}' '{}' '{}' '{}' --threads 1", (kOrtTools / "run_model.mjs").string(),
                                    model.string(), in.string(), out.string());
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      io::SafetensorsFile ort = io::load_safetensors(out, {.mmap = false});
      ASSERT_EQ(ort.tensors.size(), 1u);
      const Tensor& got = ort.tensors.begin()->second;
      ASSERT_EQ(got.shape(), eager[i].shape()) << "ORT output " << ort.tensors.begin()->first;
      ASSERT_EQ(got.dtype(), DType::Float32);
      double scale = std::max(1.0, amax(abs(eager[i])).item<double>());
      double diff = amax(abs(sub(got, eager[i]))).item<double>();
      std::printf("%s %s: max |ORT - eager| = %.3g (output scale %.3g)\n", name.c_str(),
                  fmt::format("{}", inputs[i].shape()).c_str(), diff, scale);
      EXPECT_LE(diff, tol * scale);
    }
  }

  static inline bool setup_ok_ = false;
  fs::path dir_;
};

/// Random running statistics and affine parameters so eval-mode batch norm is not the identity.
void randomise_norms(nn::Module& m, Generator& gen) {
  for (auto& [name, t] : m.named_buffers()) {
    if (!is_floating(t.dtype())) continue;
    bool var = name.find("running_var") != std::string::npos;
    skiff::detail::copy_into(t, rand(t.shape(), t.dtype(), &gen, var ? 0.5 : -0.5, var ? 2.0 : 0.5));
  }
}

Tensor eager_forward(nn::Module& m, const Tensor& x) {
  NoGradGuard no_grad;
  Tensor y = m.forward(x);
  return y.is_contiguous() ? y : skiff::detail::contiguous_copy(y);
}

TEST_F(OrtExport, CrnnRecognizer) {
  manual_seed(3);
  Generator gen(4);
  ocr::Crnn model(ocr::CrnnOptions{.num_classes = 12, .channels = {8, 16, 16, 32, 32, 32}, .hidden_size = 16});
  randomise_norms(model, gen);
  model.eval();
  graph::Graph g = model.inference_graph(32, 160);  // what `skiff export` writes for rec_crnn_en
  std::vector<Tensor> xs{rand({3, 3, 32, 160}, DType::Float32, &gen, -1.0, 1.0),
                         rand({1, 3, 32, 160}, DType::Float32, &gen, -1.0, 1.0)};  // any batch
  std::vector<Tensor> ys;
  for (const auto& x : xs) ys.push_back(eager_forward(model, x));
  EXPECT_EQ(ys[0].size(2), 12);
  expect_ort_matches(g, "crnn", xs, ys);
}

TEST_F(OrtExport, DbDetector) {
  manual_seed(5);
  Generator gen(6);
  ocr::DbNet model(ocr::DbNetOptions{.backbone_channels = {8, 8, 16, 16, 32}, .fpn_channels = 16, .k = 50});
  randomise_norms(model, gen);
  model.eval();
  graph::Graph g = model.inference_graph(64, 64);  // as export_detector traces it
  // Run at other sizes than the traced one, as skiff ocr does.
  std::vector<Tensor> xs{rand({2, 3, 96, 160}, DType::Float32, &gen, -2.0, 2.0),
                         rand({1, 3, 64, 224}, DType::Float32, &gen, -2.0, 2.0)};
  std::vector<Tensor> ys;
  for (const auto& x : xs) ys.push_back(eager_forward(model, x));
  expect_ort_matches(g, "dbnet", xs, ys);
}

// A CNN with the ops the tracer lowers most: conv + batch norm + relu, grouped conv,
// max / average pooling, interpolate, concat, layer norm, GELU, linear, softmax.
class MixedCnn : public nn::Module {
 public:
  MixedCnn() {
    conv1 = register_module("conv1", std::make_shared<nn::Conv2d>(3, 8, std::vector<int64_t>{3}, std::vector<int64_t>{1},
                                                                  std::vector<int64_t>{1}));
    bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(8));
    conv2 = register_module("conv2", std::make_shared<nn::Conv2d>(8, 8, std::vector<int64_t>{3}, std::vector<int64_t>{2},
                                                                  std::vector<int64_t>{1}, std::vector<int64_t>{1}, 4));
    norm = register_module("norm", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{16}));
    head = register_module("head", std::make_shared<nn::Linear>(16, 6));
  }
  std::string type_name() const override { return "MixedCnn"; }
  Tensor forward(const Tensor& x) override {
    Tensor y = relu((*bn1)((*conv1)(x)));                    // [N, 8, 16, 16]
    Tensor a = (*conv2)(y);                                  // [N, 8, 8, 8]
    Tensor b = max_pool2d(y, {2});                           // [N, 8, 8, 8]
    Tensor z = concat({a, b}, 1);                            // [N, 16, 8, 8]
    z = interpolate(avg_pool2d(z, {2}), {.size = {8, 8}, .mode = "bilinear"});  // [N, 16, 8, 8]
    z = mean(z, {2, 3});                                     // [N, 16]
    z = gelu((*norm)(z));
    return softmax((*head)(z), -1);
  }
  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::LayerNorm> norm;
  std::shared_ptr<nn::Linear> head;
};

graph::Graph trace_dynamic(nn::Module& m, const Tensor& x) {
  m.eval();
  graph::TraceOptions opt;
  opt.dynamic_batch = true;
  return graph::trace(m, {x}, opt);
}

TEST_F(OrtExport, TracedModules) {
  manual_seed(7);
  Generator gen(8);
  {
    MixedCnn m;
    randomise_norms(m, gen);
    graph::Graph g = trace_dynamic(m, randn({2, 3, 16, 16}, DType::Float32, &gen));
    std::vector<Tensor> xs{randn({2, 3, 16, 16}, DType::Float32, &gen), randn({5, 3, 16, 16}, DType::Float32, &gen)};
    std::vector<Tensor> ys;
    for (const auto& x : xs) ys.push_back(eager_forward(m, x));
    expect_ort_matches(g, "mixed_cnn", xs, ys);
  }
  {
    nn::TransformerLayerOptions opt;
    opt.dim_feedforward = 32;
    opt.dropout = 0.0;
    opt.activation = nn::TransformerActivation::GELU;
    nn::TransformerEncoderLayer layer(16, 4, opt);
    graph::Graph g = trace_dynamic(layer, randn({2, 5, 16}, DType::Float32, &gen));
    std::vector<Tensor> xs{randn({3, 5, 16}, DType::Float32, &gen)};
    std::vector<Tensor> ys{eager_forward(layer, xs[0])};
    expect_ort_matches(g, "transformer_layer", xs, ys);
  }
  {
    nn::LSTM lstm(6, 5, nn::RNNOptions{.num_layers = 2, .batch_first = true, .bidirectional = true});
    graph::Graph g = trace_dynamic(lstm, randn({1, 4, 6}, DType::Float32, &gen));
    std::vector<Tensor> xs{randn({1, 4, 6}, DType::Float32, &gen), randn({5, 4, 6}, DType::Float32, &gen)};
    std::vector<Tensor> ys;
    for (const auto& x : xs) ys.push_back(eager_forward(lstm, x));
    expect_ort_matches(g, "lstm", xs, ys);
  }
  {
    nn::GRU gru(6, 5, nn::RNNOptions{.num_layers = 2, .batch_first = true});
    graph::Graph g = trace_dynamic(gru, randn({1, 4, 6}, DType::Float32, &gen));
    std::vector<Tensor> xs{randn({3, 4, 6}, DType::Float32, &gen)};
    std::vector<Tensor> ys{eager_forward(gru, xs[0])};
    expect_ort_matches(g, "gru", xs, ys);
  }
}

}  // namespace
}  // namespace skiff
