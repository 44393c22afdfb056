// The GFL losses: hand-computed values, gradients against finite differences,
// and the whole batch loss driving raw predictions onto an object.
#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/autograd/gradcheck.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"
#include "suites/detection/train/gfl_loss.h"

namespace skiff::detection {
namespace {

double scalar(const Tensor& t) { return to(t, DType::Float64).to_vector<double>()[0]; }

TEST(GflLosses, GiouOfEqualOverlappingAndDisjointBoxes) {
  Tensor pred = from_vector<float>({0, 0, 2, 2, 0, 0, 2, 2, 0, 0, 1, 1}, {3, 4});
  Tensor target = from_vector<float>({0, 0, 2, 2, 1, 1, 3, 3, 2, 2, 3, 3}, {3, 4});
  std::vector<float> loss = giou_loss(pred, target).to_vector<float>();
  EXPECT_NEAR(loss[0], 0.0, 1e-6);
  EXPECT_NEAR(loss[1], 1.0 - (1.0 / 7 - 2.0 / 9), 1e-6);  // IoU 1/7, enclosing 9, union 7
  EXPECT_NEAR(loss[2], 1.0 + 7.0 / 9, 1e-6);              // IoU 0, enclosing 9, union 2
}

TEST(GflLosses, DistributionFocalLossOnUniformAndPeakedBins) {
  Tensor logits = zeros({2, 8});
  Tensor peaked = from_vector<float>({0, 0, 0, 40, 0, 0, 0, 0}, {1, 8});
  Tensor both = concat({narrow(logits, 0, 0, 1), peaked}, 0);
  std::vector<float> loss = distribution_focal_loss(both, from_vector<float>({2.25f, 3.f})).to_vector<float>();
  EXPECT_NEAR(loss[0], std::log(8.0), 1e-5);  // -(0.75 + 0.25) log(1/8)
  EXPECT_NEAR(loss[1], 0.0, 1e-5);            // all mass on the true bin
  std::vector<float> d = expected_distance(both).to_vector<float>();
  EXPECT_NEAR(d[0], 3.5, 1e-5);
  EXPECT_NEAR(d[1], 3.0, 1e-5);
}

TEST(GflLosses, VarifocalWeightsPositivesByTargetAndNegativesByFocus) {
  Tensor logits = zeros({2});  // p = 0.5
  Tensor target = from_vector<float>({0.8f, 0.f});
  Tensor positive = from_vector<float>({1.f, 0.f});
  // Positive: weight 0.8, BCE log 2; negative: weight 0.75 * 0.5^2, BCE log 2.
  EXPECT_NEAR(scalar(varifocal_loss(logits, target, positive)), (0.8 + 0.1875) * std::log(2.0), 1e-6);
}

TEST(GflLosses, GradientsMatchFiniteDifferences) {
  Generator gen(7);
  Tensor logits = randn({3, 5}, DType::Float64, &gen).set_requires_grad(true);
  Tensor target = to(from_vector<float>({0.3f, 0, 0, 0.9f, 0, 0, 0, 0, 0, 0.f, 0, 0, 0, 0, 0.5f}, {3, 5}), DType::Float64);
  Tensor positive = gt(target, 0.0);
  positive = to(positive, DType::Float64);
  auto vfl = autograd::gradcheck([&](const std::vector<Tensor>& x) { return varifocal_loss(x[0], target, positive); },
                                 {logits});
  EXPECT_TRUE(vfl.ok) << vfl.message;
  auto dfl = autograd::gradcheck(
      [&](const std::vector<Tensor>& x) { return distribution_focal_loss(x[0], from_vector<float>({0.5f, 1.7f, 3.2f})); },
      {logits});
  EXPECT_TRUE(dfl.ok) << dfl.message;
  Tensor pred = to(from_vector<float>({0, 0, 2, 3, 1, 1, 4, 2}, {2, 4}), DType::Float64).set_requires_grad(true);
  Tensor truth = to(from_vector<float>({1, 1, 3, 3, 0, 0, 2, 5}, {2, 4}), DType::Float64);
  auto giou = autograd::gradcheck([&](const std::vector<Tensor>& x) { return giou_loss(x[0], truth); }, {pred});
  EXPECT_TRUE(giou.ok) << giou.message;
}

TEST(GflLosses, BatchLossPullsRawPredictionsOntoTheObject) {
  // One image, a 4 x 4 grid at stride 8 (32 x 32), 2 classes, reg_max 7.
  const int reg_max = 7, classes = 2;
  AnchorPoints anchors = anchor_points({4}, {4}, {8});
  Tensor cls = full({1, 16, classes}, -4.0).set_requires_grad(true);
  Tensor reg = zeros({1, 16, 4 * (reg_max + 1)}).set_requires_grad(true);
  std::vector<GroundTruth> truth{GroundTruth{{Box{6, 5, 27, 22}}, {1}}};
  optim::Adam adam({cls, reg}, optim::AdamOptions{.lr = 0.1});
  double first = 0, last = 0;
  GflLoss loss;
  for (int step = 0; step < 150; ++step) {
    adam.zero_grad();
    DenseOutputs out{cls, reg, {4}, {4}};
    loss = gfl_loss(out, anchors, truth, reg_max);
    backward(loss.total);
    adam.step();
    (step == 0 ? first : last) = scalar(loss.total);
  }
  EXPECT_GT(loss.positives, 0);
  EXPECT_LT(last, 0.3 * first);
  // The best-scoring cell of class 1 now predicts the object's box.
  NoGradGuard no_grad;
  std::vector<float> probs = contiguous(sigmoid(cls)).to_vector<float>();
  int best = 0;
  for (int i = 0; i < 16; ++i)
    if (probs[size_t(i * classes + 1)] > probs[size_t(best * classes + 1)]) best = i;
  std::vector<float> d = contiguous(expected_distance(reshape(narrow(reg, 1, best, 1), {4, reg_max + 1}))).to_vector<float>();
  const float x = anchors.cx[size_t(best)], y = anchors.cy[size_t(best)];
  Box predicted{x - 8 * d[0], y - 8 * d[1], x + 8 * d[2], y + 8 * d[3]};
  EXPECT_GT(iou(predicted, truth[0].boxes[0]), 0.9f);
  EXPECT_GT(probs[size_t(best * classes + 1)], 0.5f);
  EXPECT_LT(probs[size_t(best * classes + 0)], 0.1f);
}

TEST(GflLosses, BadShapesAreErrors) {
  AnchorPoints anchors = anchor_points({2}, {2}, {8});
  DenseOutputs out{zeros({1, 4, 2}), zeros({1, 4, 32}), {2}, {2}};
  EXPECT_THROW(gfl_loss(out, anchors, {}, 7), ValueError);                    // no truth for the image
  EXPECT_THROW(gfl_loss(out, anchors, {GroundTruth{}}, 5), ShapeError);       // reg_max disagrees
  EXPECT_THROW(giou_loss(zeros({2, 4}), zeros({3, 4})), ShapeError);
}

}  // namespace
}  // namespace skiff::detection
