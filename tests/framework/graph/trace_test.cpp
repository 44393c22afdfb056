// Tracing eager modules into graph IR: traced -> exported (the ONNX checker
// passes) -> re-imported -> the Predictor gives the eager outputs, at the traced
// batch size and at another one (dynamic batch).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "framework/core/rng.h"
#include "framework/engine/predictor.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/onnx_import.h"
#include "framework/graph/trace.h"
#include "framework/nn/nn.h"
#include "framework/ops/ops.h"

namespace skiff::graph {
namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) { return amax(abs(sub(a, b))).item<double>(); }

/// Random running statistics so eval-mode batch_norm is not the identity.
void randomise_buffers(nn::Module& m, Generator& gen) {
  for (auto& [name, t] : m.named_buffers()) {
    if (!is_floating(t.dtype())) continue;
    bool var = name.find("running_var") != std::string::npos;
    skiff::detail::copy_into(t, rand(t.shape(), t.dtype(), &gen, var ? 0.5 : -0.5, var ? 2.0 : 0.5));
  }
}

int count_ops(const Graph& g, const std::string& op_type) {
  return int(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op_type == op_type; }));
}

/// Traces `m` on x (dynamic batch), exports, re-imports and runs every input
/// through the Predictor, comparing with eager forward. Returns the traced graph.
Graph expect_round_trip(nn::Module& m, const Tensor& x, const std::vector<Tensor>& more, double tol = 1e-5) {
  m.eval();
  TraceOptions opt;
  opt.dynamic_batch = true;
  Graph g = trace(m, {x}, opt);
  std::string bytes = export_onnx_bytes(g);  // runs onnx::checker
  Graph back = import_onnx_bytes(bytes, "traced");
  EXPECT_EQ(back.inputs.at(0).shape.at(0).symbol, "batch");
  engine::Predictor predictor(back);
  std::vector<Tensor> all{x};
  all.insert(all.end(), more.begin(), more.end());
  for (const auto& in : all) {
    Tensor eager;
    {
      NoGradGuard no_grad;
      eager = m.forward(in);
    }
    Tensor got = predictor.run(std::vector<Tensor>{in}).at(0);
    EXPECT_EQ(got.shape(), eager.shape());
    if (got.shape() != eager.shape()) continue;
    double diff = max_abs_diff(got, eager);
    std::printf("%s input %s: max |predictor - eager| = %.3g\n", m.type_name().c_str(), fmt::format("{}", in.shape()).c_str(), diff);
    EXPECT_LE(diff, tol) << fmt::format("input {}", in.shape());
  }
  return g;
}

class SmallCnn : public nn::Module {
 public:
  SmallCnn() {
    backbone = register_module("backbone", std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
                                               std::make_shared<nn::Conv2d>(3, 8, std::vector<int64_t>{3},
                                                                            std::vector<int64_t>{1},
                                                                            std::vector<int64_t>{1}),
                                               std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::ReLU>()}));
    conv2 = register_module("conv2", std::make_shared<nn::Conv2d>(8, 8, std::vector<int64_t>{3},
                                                                  std::vector<int64_t>{1}, std::vector<int64_t>{1},
                                                                  std::vector<int64_t>{1}, 2));
    bn2 = register_module("bn2", std::make_shared<nn::BatchNorm2d>(8));
    head = register_module("head", std::make_shared<nn::Linear>(16, 5));
  }
  std::string type_name() const override { return "SmallCnn"; }
  Tensor forward(const Tensor& x) override {
    Tensor y = (*backbone)(x);                    // [N, 8, 16, 16]
    y = max_pool2d(y, {2});                       // [N, 8, 8, 8]
    Tensor r = hardswish((*bn2)((*conv2)(y)));    // grouped conv
    y = silu(add(y, r));                          // residual
    y = avg_pool2d(y, {2}, {2}, {0});             // [N, 8, 4, 4]
    Tensor a = global_avg_pool2d(slice(y, 1, 0, 4));
    Tensor b = mean(sigmoid(slice(y, 1, 4, 8)), {2, 3}, true);
    y = concat({a, b}, 1);                        // [N, 8, 1, 1]
    y = flatten(y, 1);                            // [N, 8]
    y = concat({y, tanh(mul(y, 0.5))}, 1);        // [N, 16]
    return softmax((*head)(gelu(y)), -1);
  }
  std::shared_ptr<nn::Sequential> backbone;
  std::shared_ptr<nn::Conv2d> conv2;
  std::shared_ptr<nn::BatchNorm2d> bn2;
  std::shared_ptr<nn::Linear> head;
};

class Mlp : public nn::Module {
 public:
  Mlp() {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(12, 32));
    norm = register_module("norm", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{32}));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(32, 3));
  }
  std::string type_name() const override { return "Mlp"; }
  Tensor forward(const Tensor& x) override {
    Tensor h = relu((*fc1)(x));
    h = (*norm)(h);
    h = sub(h, clamp(h, -0.5, 0.5));
    return log_softmax((*fc2)(div(h, 2.0)), 1);
  }
  std::shared_ptr<nn::Linear> fc1, fc2;
  std::shared_ptr<nn::LayerNorm> norm;
};

TEST(Trace, SmallCnnRoundTripsWithDynamicBatch) {
  manual_seed(1);
  Generator gen(3);
  SmallCnn m;
  randomise_buffers(m, gen);
  Tensor x = randn({2, 3, 16, 16}, DType::Float32, &gen);
  Graph g = expect_round_trip(m, x, {randn({5, 3, 16, 16}, DType::Float32, &gen),
                                     randn({1, 3, 16, 16}, DType::Float32, &gen)});
  // Parameters and buffers are initializers named by their module path.
  for (const char* name : {"backbone.0.weight", "backbone.0.bias", "backbone.1.weight", "backbone.1.running_mean",
                           "backbone.1.running_var", "conv2.weight", "bn2.bias", "head.weight", "head.bias"})
    EXPECT_TRUE(g.is_initializer(name)) << name;
  EXPECT_EQ(count_ops(g, "Conv"), 2);
  EXPECT_EQ(count_ops(g, "BatchNormalization"), 2);  // eval batch_norm recovered from its composite
  EXPECT_EQ(count_ops(g, "MaxPool"), 1);
  EXPECT_EQ(count_ops(g, "AveragePool"), 1);
  EXPECT_EQ(count_ops(g, "GlobalAveragePool"), 1);
  EXPECT_EQ(count_ops(g, "Softmax"), 1);
  EXPECT_EQ(g.outputs.at(0).name, "output");
  EXPECT_EQ(g.outputs.at(0).shape.at(0).symbol, "batch");
}

TEST(Trace, MlpRoundTripsWithDynamicBatch) {
  manual_seed(2);
  Generator gen(4);
  Mlp m;
  Tensor x = randn({4, 12}, DType::Float32, &gen);
  Graph g = expect_round_trip(m, x, {randn({7, 12}, DType::Float32, &gen)});
  EXPECT_EQ(count_ops(g, "LayerNormalization"), 1);
  EXPECT_EQ(count_ops(g, "MatMul"), 2);
  EXPECT_EQ(count_ops(g, "Clip"), 1);
  EXPECT_TRUE(g.is_initializer("norm.weight"));
}

TEST(Trace, TransformerEncoderLayerRoundTripsWithDynamicBatch) {
  manual_seed(5);
  Generator gen(6);
  nn::TransformerLayerOptions opt;
  opt.dim_feedforward = 32;
  opt.dropout = 0.0;
  opt.activation = nn::TransformerActivation::GELU;
  nn::TransformerEncoderLayer layer(16, 4, opt);
  Tensor x = randn({2, 5, 16}, DType::Float32, &gen);
  Graph g = expect_round_trip(layer, x, {randn({3, 5, 16}, DType::Float32, &gen)});
  EXPECT_EQ(count_ops(g, "Softmax"), 1);
  EXPECT_EQ(count_ops(g, "LayerNormalization"), 2);
  EXPECT_TRUE(g.is_initializer("self_attn.q_proj.weight"));
}

// Traced at batch 1 (the size-1 batch dim is the ambiguous case for reshapes), run at 1, 2 and 5.
TEST(Trace, RecurrentLayersRoundTripWithDynamicBatch) {
  manual_seed(8);
  Generator gen(9);
  nn::LSTM lstm(6, 5, nn::RNNOptions{.num_layers = 2, .batch_first = true, .bidirectional = true});
  expect_round_trip(lstm, randn({1, 4, 6}, DType::Float32, &gen),
                    {randn({2, 4, 6}, DType::Float32, &gen), randn({5, 4, 6}, DType::Float32, &gen)});
  nn::GRU gru(6, 5, nn::RNNOptions{.num_layers = 2, .batch_first = true});
  expect_round_trip(gru, randn({1, 4, 6}, DType::Float32, &gen), {randn({3, 4, 6}, DType::Float32, &gen)});
}

TEST(Trace, StaticBatchKeepsFixedShapes) {
  Mlp m;
  m.eval();
  Graph g = trace(m, {randn({3, 12})});
  EXPECT_EQ(g.inputs.at(0).shape.at(0), Dim::fixed(3));
  EXPECT_EQ(g.outputs.at(0).shape.at(0), Dim::fixed(3));
  engine::Predictor p(import_onnx_bytes(export_onnx_bytes(g), "static"));
  EXPECT_EQ(p.run(std::vector<Tensor>{randn({3, 12})}).at(0).shape(), (Shape{3, 3}));
}

TEST(Trace, FunctionWithSeveralInputsAndOutputs) {
  nn::Linear lin(4, 4);
  TraceOptions opt;
  opt.input_names = {"a", "b"};
  opt.output_names = {"sum", "prod"};
  Graph g = trace(
      &lin, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{add(lin.forward(in[0]), in[1]), mul(in[0], in[1])}; },
      {randn({2, 4}), randn({2, 4})}, opt);
  engine::Predictor p(import_onnx_bytes(export_onnx_bytes(g), "two"));
  Tensor a = randn({2, 4}), b = randn({2, 4});
  auto out = p.run(std::vector<Tensor>{a, b});
  NoGradGuard no_grad;
  EXPECT_LE(max_abs_diff(out.at(0), add(lin.forward(a), b)), 1e-5);
  EXPECT_LE(max_abs_diff(out.at(1), mul(a, b)), 1e-6);
  EXPECT_EQ(g.outputs.at(1).name, "prod");
}

// A transposed convolution whose windows tile its output traces to MatMul + pixel_shuffle, and
// pixel_shuffle with unequal factors to Reshape/Transpose/Reshape: both export with a dynamic batch.
TEST(Trace, TilingConvTransposeAndPixelShuffleRoundTrip) {
  Generator gen(12);
  Tensor w = randn({4, 3, 2, 3}, DType::Float32, &gen), b = randn({3}, DType::Float32, &gen);
  auto f = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{pixel_shuffle(conv_transpose2d(in[0], w, b, {2, 3}), 1, 3)};
  };
  TraceOptions opt;
  opt.dynamic_batch = true;
  Graph g = trace(nullptr, f, {randn({2, 4, 3, 5}, DType::Float32, &gen)}, opt);
  EXPECT_EQ(count_ops(g, "MatMul"), 1);
  engine::Predictor p(import_onnx_bytes(export_onnx_bytes(g), "tiled"));
  for (int64_t batch : {2, 3}) {
    Tensor x = randn({batch, 4, 3, 5}, DType::Float32, &gen);
    Tensor got = p.run(std::vector<Tensor>{x}).at(0), want = f({x}).at(0);
    ASSERT_EQ(got.shape(), (Shape{batch, 1, 6, 45}));
    EXPECT_LE(max_abs_diff(got, want), 1e-5) << "batch " << batch;
  }
}

// norm lowers to ReduceL2, Abs + ReduceSum / ReduceMax / ReduceMin, or Pow / ReduceSum / Pow.
TEST(Trace, NormsOfEveryOrderRoundTrip) {
  Generator gen(13);
  for (double p : {2.0, 1.0, 3.0, 0.5, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(p);
    auto f = [p](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{norm(in[0], p, {1}, true), norm(in[0], p, {0, 2})};
    };
    TraceOptions opt;
    opt.dynamic_batch = true;
    Graph g = trace(nullptr, f, {randn({2, 5, 3}, DType::Float32, &gen)}, opt);
    engine::Predictor pred(import_onnx_bytes(export_onnx_bytes(g), "norms"));
    Tensor x = randn({2, 5, 3}, DType::Float32, &gen);
    auto got = pred.run(std::vector<Tensor>{x});
    auto want = f({x});
    for (size_t k = 0; k < 2; ++k) EXPECT_LE(max_abs_diff(got.at(k), want.at(k)), 1e-5) << "output " << k;
  }
  EXPECT_THROW(trace(nullptr, [](const std::vector<Tensor>& in) { return std::vector<Tensor>{norm(in[0], 0.0)}; },
                     {randn({2, 3})}),
               NotImplementedError);
}

TEST(Trace, OutputThatIsAnInputGetsAnIdentity) {
  nn::Identity id;
  Graph g = trace(id, {randn({2, 3})});
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Identity");
  export_onnx_bytes(g);
}

TEST(Trace, OpWithoutLoweringNamesTheOp) {
  Tensor x = randn({3, 4});
  try {
    trace(nullptr, [](const std::vector<Tensor>& in) { return std::vector<Tensor>{var(in[0], {1})}; }, {x});
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("'var'"), std::string::npos) << e.what();
  }
  // The observer is removed again after a failed trace: eager ops run normally.
  EXPECT_EQ(skiff::detail::op_observer(), nullptr);
  EXPECT_EQ(var(x, {1}).shape(), (Shape{3}));
}

TEST(Trace, TrainingModeBatchNormAsksForEval) {
  nn::BatchNorm2d bn(3);
  bn.train();
  try {
    trace(bn, {randn({2, 3, 4, 4})});
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    // The op's SKIFF_NOT_EXPORTABLE reason (framework/graph/lowerings/nn.cpp).
    EXPECT_NE(std::string(e.what()).find("call eval()"), std::string::npos) << e.what();
  }
}

TEST(Trace, CapturedConstantsAreInitializers) {
  Tensor table = randn({4});
  Graph g = trace(nullptr, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{add(in[0], table)}; },
                  {randn({2, 4})});
  ASSERT_EQ(g.initializers.size(), 1u);
  EXPECT_EQ(g.initializers.begin()->first, "const_0");
  engine::Predictor p(g);
  Tensor x = randn({2, 4});
  EXPECT_LE(max_abs_diff(p.run(std::vector<Tensor>{x}).at(0), add(x, table)), 1e-6);
}

}  // namespace
}  // namespace skiff::graph
