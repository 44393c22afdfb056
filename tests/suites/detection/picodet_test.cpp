// The PicoDet-class model: output layout, its inference graph against the
// eager model, and a short training run on drawn boxes whose loss must fall.
#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "framework/engine/predictor.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"
#include "suites/detection/train/gfl_loss.h"
#include "suites/detection/train/picodet.h"

namespace skiff::detection {
namespace {

PicoDetOptions small(int classes) {
  PicoDetOptions o;
  o.num_classes = classes;
  o.backbone_scale = 0.25;
  o.neck_channels = 32;
  o.feat_convs = 1;
  return o;
}

TEST(PicoDet, DenseOutputsCoverEveryLevelCell) {
  PicoDet model(small(3));
  DenseOutputs d = model.dense(zeros({2, 3, 64, 96}));
  // Strides 8, 16, 32: 8 x 12 + 4 x 6 + 2 x 3 cells.
  EXPECT_EQ(d.cls_logits.shape(), (Shape{2, 126, 3}));
  EXPECT_EQ(d.reg_logits.shape(), (Shape{2, 126, 32}));
  EXPECT_EQ(d.level_heights, (std::vector<int64_t>{8, 4, 2}));
  EXPECT_EQ(d.level_widths, (std::vector<int64_t>{12, 6, 3}));
  AnchorPoints a = anchor_points(d.level_heights, d.level_widths, picodet_strides());
  ASSERT_EQ(a.size(), 126);
  EXPECT_FLOAT_EQ(a.cx[1], 12.f);   // level 0, cell (0, 1)
  EXPECT_FLOAT_EQ(a.cy[96], 8.f);   // level 1, cell (0, 0)
  EXPECT_FLOAT_EQ(a.stride[125], 32.f);
  // Class logits start at the 0.01 prior.
  EXPECT_NEAR(sigmoid(d.cls_logits).to_vector<float>()[0], 0.01, 0.005);
  EXPECT_THROW(model.dense(zeros({1, 3, 48, 64})), ShapeError);
  EXPECT_THROW(PicoDet(PicoDetOptions{.num_classes = 0}), ValueError);
}

TEST(PicoDet, InferenceGraphEqualsTheEagerModel) {
  PicoDet model(small(4));
  model.eval();
  Generator gen(3);
  Tensor image = randn({2, 3, 64, 64}, DType::Float32, &gen);
  DenseOutputs d = model.dense(image);
  engine::Predictor predictor(model.inference_graph(64, 64));
  std::vector<Tensor> outs = predictor.run({image});
  ASSERT_EQ(outs.size(), 6u);  // cls_8, cls_16, cls_32, reg_8, reg_16, reg_32
  std::vector<int64_t> cells{64, 16, 4};
  int64_t at = 0;
  for (size_t l = 0; l < 3; ++l) {
    Tensor want_cls = sigmoid(narrow(d.cls_logits, 1, at, cells[l]));
    Tensor want_reg = narrow(d.reg_logits, 1, at, cells[l]);
    EXPECT_LT(amax(abs(sub(outs[l], want_cls))).to_vector<float>()[0], 1e-4) << "level " << l;
    EXPECT_LT(amax(abs(sub(outs[l + 3], want_reg))).to_vector<float>()[0], 1e-4) << "level " << l;
    at += cells[l];
  }
}

TEST(PicoDet, ShortTrainingRunLowersTheLoss) {
  // Four 64 x 64 images, each with one bright rectangle of class (i % 2).
  const std::vector<Box> boxes{{8, 8, 40, 30}, {20, 14, 60, 58}, {4, 30, 28, 62}, {30, 4, 62, 36}};
  std::vector<float> pixels(4 * 3 * 64 * 64, -1.f);
  std::vector<GroundTruth> truth;
  for (size_t i = 0; i < 4; ++i) {
    const Box& b = boxes[i];
    for (int c = 0; c < 3; ++c)
      for (int y = int(b.y0); y < int(b.y1); ++y)
        for (int x = int(b.x0); x < int(b.x1); ++x)
          pixels[((i * 3 + size_t(c)) * 64 + size_t(y)) * 64 + size_t(x)] = (i % 2 == 0) == (c == 0) ? 1.f : 0.f;
    truth.push_back(GroundTruth{{b}, {int(i % 2)}});
  }
  Tensor images = from_vector(pixels, {4, 3, 64, 64});
  PicoDet model(small(2));
  model.train();
  optim::Adam adam(model.parameters(), optim::AdamOptions{.lr = 0.01});
  AnchorPoints anchors;
  std::vector<double> losses;
  for (int step = 0; step < 40; ++step) {
    adam.zero_grad();
    DenseOutputs d = model.dense(images);
    if (step == 0) anchors = anchor_points(d.level_heights, d.level_widths, picodet_strides());
    GflLoss loss = gfl_loss(d, anchors, truth, model.options().reg_max);
    backward(loss.total);
    adam.step();
    losses.push_back(loss.total.to_vector<float>()[0]);
  }
  const double first = (losses[0] + losses[1]) / 2, last = (losses[38] + losses[39]) / 2;
  EXPECT_LT(last, 0.6 * first) << "first " << first << ", last " << last;
}

}  // namespace
}  // namespace skiff::detection
