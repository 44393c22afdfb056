// The dual encoder: the contrastive loss against a hand computation, the temperature clamp,
// padding that changes nothing, normalised embeddings, and a short training run that learns
// to match its pairs.
#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/optim/optimizers.h"
#include "framework/ops/ops.h"
#include "suites/multimodal/clip_model.h"

namespace skiff::multimodal {
namespace {

ClipConfig tiny() {
  ClipConfig c;
  c.image_size = 16, c.patch_size = 8;
  c.vision_width = 32, c.vision_layers = 1, c.vision_heads = 2;
  c.vocab_size = 20, c.context_length = 8;
  c.text_width = 32, c.text_layers = 1, c.text_heads = 2;
  c.embed_dim = 16;
  return c;
}

Tensor f32(std::vector<float> v, Shape s) { return from_vector(v, s); }

TEST(ClipLoss, MatchesTheHandComputedSymmetricCrossEntropy) {
  // I = [[1, 0], [0, 1]], T = [[1, 0], [0.6, 0.8]], scale 2: logits = 2 * I T^T = [[2, 1.2], [0, 1.6]].
  const Tensor i = f32({1, 0, 0, 1}, {2, 2}), t = f32({1, 0, 0.6f, 0.8f}, {2, 2});
  auto ce = [](double right, double other) { return std::log(std::exp(right) + std::exp(other)) - right; };
  const double images_to_texts = (ce(2, 1.2) + ce(1.6, 0)) / 2;  // rows
  const double texts_to_images = (ce(2, 0) + ce(1.6, 1.2)) / 2;  // columns
  EXPECT_NEAR(clip_loss(i, t, full({}, 2.0)).item<double>(), (images_to_texts + texts_to_images) / 2, 1e-6);
  EXPECT_THROW(clip_loss(i, f32({1, 0, 0}, {1, 3}), full({}, 1.0)), ShapeError);
}

TEST(ClipModel, TemperatureStartsAtItsInitAndIsClamped) {
  ClipModel m(tiny());
  EXPECT_NEAR(m.logit_scale_value().item<double>(), 1 / 0.07, 1e-3);
  // Past log(100) the scale stays 100 and no gradient pushes it further.
  {
    NoGradGuard no_grad;
    detail::fill(m.logit_scale, 10.0);
  }
  Tensor s = m.logit_scale_value();
  EXPECT_NEAR(s.item<double>(), 100.0, 1e-3);
  backward(s);
  EXPECT_EQ(m.logit_scale.grad().item<double>(), 0.0);
  ClipConfig bad = tiny();
  bad.max_logit_scale = 5;  // below 1 / 0.07
  EXPECT_THROW(ClipModel{bad}, ValueError);
  bad = tiny();
  bad.image_size = 20;  // not a multiple of the patch
  EXPECT_THROW(ClipModel{bad}, ValueError);
  bad.vision_type = "cnn";  // no patches: fine
  EXPECT_NO_THROW(ClipModel{bad});
  bad.vision_type = "resnet";
  EXPECT_THROW(ClipModel{bad}, ValueError);
}

TEST(ClipModel, EmbeddingsAreUnitVectorsAndPaddingChangesNothing) {
  for (bool causal : {true, false}) {
    SCOPED_TRACE(causal ? "causal" : "bidirectional");
    ClipConfig c = tiny();
    c.causal_text = causal;
    ClipModel m(c);
    Generator g(3);
    const Tensor images = randn({3, 3, 16, 16}, DType::Float32, &g);
    const Tensor e = m.encode_image(images);
    ASSERT_EQ(e.shape(), (Shape{3, 16}));
    EXPECT_LT(amax(abs(sub(norm(e, 2.0, {1}), 1.0))).item<double>(), 1e-5);
    // "5 7 9" alone and padded to 6 tokens with a different pad id each time.
    const Tensor alone = m.encode_text(from_vector(std::vector<int64_t>{5, 7, 9}, {1, 3}), Tensor());
    const Tensor ids = from_vector(std::vector<int64_t>{5, 7, 9, 0, 0, 0, 5, 7, 9, 3, 3, 3}, {2, 6});
    const Tensor pad = from_vector(std::vector<bool>{false, false, false, true, true, true,  //
                                                    false, false, false, true, true, true},
                                   {2, 6});
    const Tensor padded = m.encode_text(ids, pad);
    EXPECT_LT(amax(abs(sub(padded, expand(alone, {2, 16})))).item<double>(), 1e-5);
    EXPECT_THROW(m.encode_text(from_vector(std::vector<int64_t>(9, 1), {1, 9}), Tensor()), ShapeError);
    EXPECT_THROW(m.encode_image(randn({1, 3, 8, 8}, DType::Float32, &g)), ShapeError);
  }
}

class ClipTowers : public ::testing::TestWithParam<std::string> {};

TEST_P(ClipTowers, ShortTrainingMatchesImagesToTheirCaptions) {
  // Eight flat-coloured images, each paired with a two-token "caption" (colour id, shade id).
  ClipConfig c = tiny();
  c.vision_type = GetParam();
  c.vision_channels = {8, 16};
  ClipModel m(c);
  Generator g(5);
  std::vector<float> px;
  std::vector<int64_t> ids;
  for (int k = 0; k < 8; ++k) {
    const float r = float(k & 1), gr = float((k >> 1) & 1), b = float((k >> 2) & 1);
    for (float v : {r, gr, b})
      for (int p = 0; p < 256; ++p) px.push_back(v - 0.5f);
    ids.push_back(1 + k), ids.push_back(10 + k % 3);
  }
  const Tensor images = from_vector(px, {8, 3, 16, 16}), text = from_vector(ids, {8, 2});
  optim::Adam opt(m.parameters(), {.lr = 3e-3});
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    opt.zero_grad();
    Tensor loss = clip_loss(m.encode_image(images), m.encode_text(text, Tensor()), m.logit_scale_value());
    backward(loss);
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.25 * first);
  NoGradGuard no_grad;
  const Tensor sim = matmul(m.encode_image(images), t(m.encode_text(text, Tensor())));
  EXPECT_EQ(argmax(sim, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

INSTANTIATE_TEST_SUITE_P(VisionTypes, ClipTowers, ::testing::Values("vit", "cnn"));

}  // namespace
}  // namespace skiff::multimodal
