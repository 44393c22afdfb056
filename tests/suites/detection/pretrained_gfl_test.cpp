// The zoo's NanoDet made trainable (PretrainedGflDetector): cutting the graph
// before its head convolutions and rebuilding them must give exactly the
// imported model's outputs when the classes stay, keep the box regression when
// the classifier is replaced, export to a graph equal to the module, and train.
// Pulls the model on first use, hence the "network" label of its binary.
#include "suites/detection/train/pretrained_gfl.h"

#include <gtest/gtest.h>

#include <map>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/engine/predictor.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"
#include "framework/zoo/zoo.h"
#include "suites/detection/train/gfl_loss.h"

namespace skiff::detection {
namespace {

double max_diff(const Tensor& a, const Tensor& b) { return amax(abs(sub(a, b))).item<double>(); }

// An RGB batch normalised as NanoDet's reader does (any values serve).
Tensor images(int64_t n) {
  Generator gen(7);
  return randn({n, 3, 416, 416}, DType::Float32, &gen);
}

// The imported model run as it is by the Predictor, on the same images in BGR:
// its per-level outputs concatenated in stride order, [N, A, width].
Tensor reference(const Tensor& rgb, int64_t width) {
  engine::Predictor p(zoo::resolve_model_path("nanodet-coco").string());
  Tensor bgr = concat({narrow(rgb, 1, 2, 1), narrow(rgb, 1, 1, 1), narrow(rgb, 1, 0, 1)}, 1);
  std::vector<Tensor> outs = p.run(std::vector<Tensor>{bgr});
  std::map<int64_t, Tensor, std::greater<>> by_cells;  // more cells = finer stride first
  for (size_t i = 0; i < outs.size(); ++i)
    if (outs[i].size(2) == width) by_cells[outs[i].size(1)] = outs[i];
  std::vector<Tensor> levels;
  for (auto& [cells, t] : by_cells) levels.push_back(t);
  return concat(levels, 1);
}

TEST(PretrainedGfl, SameClassesGiveTheImportedModelsOutputs) {
  PretrainedGflDetector model(PretrainedGflOptions{});
  EXPECT_EQ(model.pretrained_classes(), 80);
  EXPECT_EQ(model.strides(), (std::vector<int>{8, 16, 32}));
  model.eval();
  NoGradGuard no_grad;
  Tensor x = images(1);
  DenseOutputs d = model.dense(x);
  EXPECT_EQ(d.cls_logits.shape(), Shape({1, 3549, 80}));
  EXPECT_LT(max_diff(sigmoid(d.cls_logits), reference(x, 80)), 1e-4);
  EXPECT_LT(max_diff(d.reg_logits, reference(x, 44)), 1e-4);
}

TEST(PretrainedGfl, ANewClassifierKeepsTheBoxesAndStartsAtThePrior) {
  PretrainedGflDetector model(PretrainedGflOptions{.num_classes = 10});
  model.eval();
  NoGradGuard no_grad;
  Tensor x = images(2);
  DenseOutputs d = model.dense(x);
  EXPECT_EQ(d.cls_logits.shape(), Shape({2, 3549, 10}));
  EXPECT_LT(max_diff(narrow(d.reg_logits, 0, 1, 1), reference(narrow(x, 0, 1, 1), 44)), 1e-4);
  Tensor p = sigmoid(d.cls_logits);
  EXPECT_LT(amax(p).item<double>(), 0.05);
  EXPECT_GT(amin(p).item<double>(), 0.001);
}

TEST(PretrainedGfl, ExportedGraphEqualsTheModule) {
  PretrainedGflDetector model(PretrainedGflOptions{.num_classes = 3});
  engine::Predictor exported(model.inference_graph(416, 416));
  Tensor x = images(1);
  std::vector<Tensor> outs = exported.run(std::vector<Tensor>{x});
  ASSERT_EQ(outs.size(), 6u);
  NoGradGuard no_grad;
  model.eval();
  DenseOutputs d = model.dense(x);
  EXPECT_LT(max_diff(concat({outs[0], outs[1], outs[2]}, 1), sigmoid(d.cls_logits)), 1e-4);
  EXPECT_LT(max_diff(concat({outs[3], outs[4], outs[5]}, 1), d.reg_logits), 1e-4);
}

TEST(PretrainedGfl, FineTuningLowersTheLoss) {
  manual_seed(3);
  PretrainedGflDetector model(PretrainedGflOptions{.num_classes = 2});
  model.train();
  Tensor x = images(2);
  // One object per image, of class 0 and 1.
  std::vector<GroundTruth> truth = {{{Box{60, 80, 220, 260}}, {0}}, {{Box{150, 40, 400, 300}}, {1}}};
  optim::SGD opt(model.parameters(), {.lr = 0.001, .momentum = 0.9});
  double first = 0, last = 0;
  for (int step = 0; step < 6; ++step) {
    DenseOutputs d = model.dense(x);
    AnchorPoints anchors = anchor_points(d.level_heights, d.level_widths, model.strides());
    Tensor loss = gfl_loss(d, anchors, truth, model.reg_max(), GflLossOptions{}).total;
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
    opt.zero_grad();
    backward(loss);
    opt.step();
  }
  EXPECT_LT(last, 0.9 * first) << "first " << first << ", last " << last;
}

}  // namespace
}  // namespace skiff::detection
