// GraphModule on the real PP-OCR orientation classifier (weights in Constant
// nodes): same outputs as the Predictor, fine-tuning lowers the loss, and the
// fine-tuned graph exports and re-imports with the fine-tuned outputs. Pulls the
// model from the zoo on first use, hence the "network" label.
#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/engine/predictor.h"
#include "framework/graph/graph_module.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/onnx_import.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"
#include "framework/zoo/zoo.h"

namespace skiff::graph {
namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) { return amax(abs(sub(a, b))).item<double>(); }

std::string cls_path() { return zoo::fetch_file("ppocr-mobile-v2-cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx").string(); }

TEST(GraphModuleModels, ClassifierMatchesPredictorAndFineTunes) {
  Graph g = import_onnx(cls_path());
  GraphModule m(g);
  // Weights live in Constant nodes: they become parameters; BN statistics become buffers.
  EXPECT_GT(m.parameters().size(), 50u);
  EXPECT_GT(m.num_parameters(), 100000);
  EXPECT_FALSE(m.buffers().empty());
  std::printf("ppocr-mobile-v2-cls: %zu parameters (%lld elements), %zu buffers\n", m.parameters().size(),
              static_cast<long long>(m.num_parameters()), m.buffers().size());

  Generator gen(11);
  Tensor x = rand({2, 3, 48, 192}, DType::Float32, &gen, -1.0, 1.0);
  engine::Predictor reference(g);
  Tensor y0 = m.forward(x);
  ASSERT_EQ(y0.shape(), (Shape{2, 2}));
  double diff = max_abs_diff(y0, reference.run(std::vector<Tensor>{x})[0]);
  std::printf("GraphModule vs Predictor: max diff %.3g\n", diff);
  EXPECT_LE(diff, 1e-5);

  // Synthetic task: predict class 1 ("180 degrees") for these inputs.
  Tensor target = full({2}, 1.0, DType::Int64);
  auto loss_fn = [&] { return nll_loss(log(clamp_min(m.forward(x), 1e-7)), target); };
  optim::SGD opt(m.parameters(), {.lr = 0.003});
  std::vector<double> losses;
  for (int step = 0; step < 4; ++step) {
    opt.zero_grad();
    Tensor loss = loss_fn();
    losses.push_back(loss.item<double>());
    backward(loss);
    opt.step();
  }
  {
    NoGradGuard no_grad;
    losses.push_back(loss_fn().item<double>());
  }
  std::printf("loss: %s\n", fmt::format("{}", fmt::join(losses, " -> ")).c_str());
  EXPECT_LT(losses.back(), losses.front());

  Tensor tuned;
  {
    NoGradGuard no_grad;
    tuned = m.forward(x);
  }
  engine::Predictor exported(import_onnx_bytes(export_onnx_bytes(m.to_graph()), "cls-tuned"));
  double tuned_diff = max_abs_diff(exported.run(std::vector<Tensor>{x})[0], tuned);
  std::printf("fine-tuned GraphModule vs re-imported export: max diff %.3g\n", tuned_diff);
  EXPECT_LE(tuned_diff, 1e-5);
  EXPECT_GT(max_abs_diff(tuned, y0), 1e-4);
}

}  // namespace
}  // namespace skiff::graph
