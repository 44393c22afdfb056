// GraphModule on small hand-built and traced graphs: which tensors train,
// gradients against finite differences, SGD on a synthetic task, state_dict
// through safetensors, and to_graph() -> ONNX -> Predictor after fine-tuning.
#include <gtest/gtest.h>

#include <filesystem>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/engine/predictor.h"
#include "framework/graph/graph_module.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/onnx_import.h"
#include "framework/graph/trace.h"
#include "framework/io/safetensors.h"
#include "framework/nn/nn.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"
#include "tests/framework/graph/graph_builder.h"

namespace skiff::graph {
namespace {

using testing::GraphBuilder;

double max_abs_diff(const Tensor& a, const Tensor& b) { return amax(abs(sub(a, b))).item<double>(); }

/// x [N, 2, 5, 5] -> Conv -> BatchNormalization -> HardSwish -> GlobalAveragePool -> Flatten -> Gemm -> Softmax.
/// The conv weight is a Constant node (as in PaddleOCR's files), the rest initializers.
Graph tiny_cnn(DType dtype, Generator& gen) {
  auto r = [&](Shape s, double scale = 0.5) { return mul(randn(s, dtype, &gen), scale); };
  GraphBuilder b(14);  // HardSwish
  b.input("x", {-1, 2, 5, 5}, dtype)
      .node("Constant", {}, {"conv.w"}, {{"value", r({3, 2, 3, 3})}})
      .init("conv.b", r({3}))
      .init("bn.scale", add(r({3}, 0.1), 1.0))
      .init("bn.bias", r({3}, 0.1))
      .init("bn.mean", r({3}, 0.1))
      .init("bn.var", add(abs(r({3}, 0.2)), 0.5))
      .init("fc.w", r({4, 3}))
      .init("fc.b", r({4}))
      .init("alpha", full({1}, 1.5, dtype))
      .node("Conv", {"x", "conv.w", "conv.b"}, {"c"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})
      .node("BatchNormalization", {"c", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"n"})
      .node("HardSwish", {"n"}, {"h"})
      .node("Mul", {"h", "alpha"}, {"h2"})
      .node("GlobalAveragePool", {"h2"}, {"p"})
      .node("Flatten", {"p"}, {"f"})
      .node("Gemm", {"f", "fc.w", "fc.b"}, {"g"}, {{"transB", int64_t(1)}})
      .node("Softmax", {"g"}, {"y"}, {{"axis", int64_t(1)}})
      .output("y", dtype);
  Graph g = b.build();
  g.outputs[0].has_shape = true;
  g.outputs[0].shape = {Dim::dynamic("d0"), Dim::fixed(4)};
  return g;
}

TEST(GraphModule, WeightsBecomeParametersAndStatisticsBuffers) {
  Generator gen(1);
  GraphModule m(tiny_cnn(DType::Float32, gen));
  std::map<std::string, bool> trainable;
  for (const auto& [k, t] : m.named_parameters()) trainable[k] = true;
  for (const auto& [k, t] : m.named_buffers()) trainable[k] = false;
  std::map<std::string, bool> expected{{"conv.w", true},   {"conv.b", true},   {"bn.scale", true},
                                       {"bn.bias", true},  {"bn.mean", false}, {"bn.var", false},
                                       {"fc.w", true},     {"fc.b", true},     {"alpha", false}};
  EXPECT_EQ(trainable, expected);
  EXPECT_EQ(m.tensor_names().at("conv.w"), "conv.w");
  for (const auto& p : m.parameters()) EXPECT_TRUE(p.requires_grad());
}

TEST(GraphModule, NamesAreSanitisedAndCollisionsResolved) {
  GraphBuilder b(13);
  b.input("x", {2, 3})
      .init("a.b", randn({3}))
      .init("a", randn({3}))         // clashes with the child "a" of "a.b"
      .init("p2o/Add:0", randn({3}))  // characters a module name cannot hold
      .node("Add", {"x", "a.b"}, {"t0"})
      .node("Add", {"t0", "a"}, {"t1"})
      .node("Add", {"t1", "p2o/Add:0"}, {"y"})
      .output("y");
  GraphModule m(b.build());
  EXPECT_EQ(m.tensor_names().at("a.b"), "a.b");
  EXPECT_EQ(m.tensor_names().at("a"), "a_1");
  EXPECT_EQ(m.tensor_names().at("p2o/Add:0"), "p2o_Add_0");
  Tensor x = randn({2, 3});
  NoGradGuard no_grad;
  auto sd = m.state_dict();
  EXPECT_LE(max_abs_diff(m.forward(x), add(add(add(x, sd.at("a.b")), sd.at("a_1")), sd.at("p2o_Add_0"))), 1e-6);
}

TEST(GraphModule, MatchesPredictor) {
  Generator gen(2);
  Graph g = tiny_cnn(DType::Float32, gen);
  GraphModule m(g);
  engine::Predictor p(g);
  Tensor x = randn({3, 2, 5, 5}, DType::Float32, &gen);
  Tensor y = m.forward(x);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_LE(max_abs_diff(y, p.run(std::vector<Tensor>{x})[0]), 1e-5);
}

TEST(GraphModule, GradientsMatchFiniteDifferences) {
  Generator gen(3);
  GraphModule m(tiny_cnn(DType::Float64, gen));
  Tensor x = randn({2, 2, 5, 5}, DType::Float64, &gen);
  Tensor v = randn({2, 4}, DType::Float64, &gen);
  auto loss = [&] { return sum(mul(m.forward(x), v)); };
  m.zero_grad();
  backward(loss());
  const double eps = 1e-6;
  for (auto& [name, p] : m.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    std::vector<double> analytic = contiguous(p.grad()).to_vector<double>();
    double* data = p.data<double>();
    for (int64_t i = 0; i < p.numel(); ++i) {
      NoGradGuard no_grad;
      double keep = data[i];
      data[i] = keep + eps;
      double plus = loss().item<double>();
      data[i] = keep - eps;
      double minus = loss().item<double>();
      data[i] = keep;
      double numeric = (plus - minus) / (2 * eps);
      EXPECT_NEAR(analytic[size_t(i)], numeric, 1e-7 + 1e-5 * std::abs(numeric)) << name << "[" << i << "]";
    }
  }
}

TEST(GraphModule, SgdFineTuningReducesLossAndExportsTheNewWeights) {
  Generator gen(4);
  Graph g = tiny_cnn(DType::Float32, gen);
  GraphModule m(g);
  Tensor x = randn({8, 2, 5, 5}, DType::Float32, &gen);
  Tensor target = full({8}, 1.0, DType::Int64);  // predict class 1 for everything
  auto loss_fn = [&] { return nll_loss(log(m.forward(x)), target); };
  optim::SGD opt(m.parameters(), {.lr = 0.1});
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    Tensor loss = loss_fn();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
    backward(loss);
    opt.step();
  }
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;

  // The fine-tuned weights go back into the graph: export, re-import, Predictor.
  Tensor tuned;
  {
    NoGradGuard no_grad;
    tuned = m.forward(x);
  }
  Graph out = m.to_graph();
  engine::Predictor p(import_onnx_bytes(export_onnx_bytes(out), "tuned"));
  EXPECT_LE(max_abs_diff(p.run(std::vector<Tensor>{x})[0], tuned), 1e-5);
  engine::Predictor before(g);
  EXPECT_GT(max_abs_diff(before.run(std::vector<Tensor>{x})[0], tuned), 1e-3);
  // The Constant node was updated in place, not turned into an initializer.
  EXPECT_FALSE(out.is_initializer("conv.w"));
}

TEST(GraphModule, StateDictRoundTripsThroughSafetensors) {
  Generator gen(5);
  Graph g = tiny_cnn(DType::Float32, gen);
  GraphModule a(g);
  {
    NoGradGuard no_grad;
    for (auto& p : a.parameters()) skiff::detail::copy_into(p, add(p, 0.25));
  }
  auto path = std::filesystem::temp_directory_path() / "skiff_graph_module_state.safetensors";
  io::save_safetensors(path, a.state_dict());
  GraphModule b(g);
  b.load_state_dict(io::load_safetensors(path).tensors);
  std::filesystem::remove(path);
  Tensor x = randn({2, 2, 5, 5}, DType::Float32, &gen);
  NoGradGuard no_grad;
  EXPECT_EQ(max_abs_diff(a.forward(x), b.forward(x)), 0.0);
}

class TinyNet : public nn::Module {
 public:
  TinyNet() {
    body = register_module("body", std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
                                       std::make_shared<nn::Conv2d>(3, 4, std::vector<int64_t>{3}),
                                       std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>()}));
    fc = register_module("fc", std::make_shared<nn::Linear>(4, 2));
  }
  std::string type_name() const override { return "TinyNet"; }
  Tensor forward(const Tensor& x) override { return (*fc)(flatten(global_avg_pool2d((*body)(x)), 1)); }
  std::shared_ptr<nn::Sequential> body;
  std::shared_ptr<nn::Linear> fc;
};

TEST(GraphModule, TracedModuleKeepsItsStateDictKeys) {
  manual_seed(6);
  TinyNet net;
  net.eval();
  Tensor x = randn({2, 3, 6, 6});
  TraceOptions opt;
  opt.dynamic_batch = true;
  Graph traced = trace(net, {x}, opt);
  EXPECT_EQ(traced.nodes.at(1).op_type, "BatchNormalization");
  GraphModule m(traced);
  auto original = net.state_dict();
  for (const auto& [key, t] : m.state_dict()) EXPECT_TRUE(original.count(key)) << key;
  EXPECT_TRUE(m.state_dict().count("body.0.weight"));
  // Loading the eager module's weights (non-strict: num_batches_tracked is not in the graph).
  auto result = m.load_state_dict(original, false);
  EXPECT_EQ(result.missing_keys.size(), 0u);
  NoGradGuard no_grad;
  Tensor x5 = randn({5, 3, 6, 6});
  EXPECT_LE(max_abs_diff(m.forward(x5), net.forward(x5)), 1e-5);
}

TEST(GraphModule, RejectsWrongInputCount) {
  Generator gen(7);
  GraphModule m(tiny_cnn(DType::Float32, gen));
  EXPECT_THROW(m.forward(std::vector<Tensor>{}), ValueError);
}

}  // namespace
}  // namespace skiff::graph
