// The captioner: a short teacher-forced run on four images learns their captions, which greedy
// decoding and beam search then produce; the loss ignores padding.
#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/optim/optimizers.h"
#include "framework/ops/ops.h"
#include "suites/multimodal/captioner.h"

namespace skiff::multimodal {
namespace {

CaptionerConfig tiny() {
  CaptionerConfig c;
  c.image_size = 16;
  c.vision_channels = {8, 16};
  c.width = 32, c.layers = 1, c.heads = 2;
  c.vocab_size = 12, c.context_length = 8;
  return c;
}

TEST(Captioner, LearnsFourCaptionsAndDecodesThem) {
  // Tokens: 0 pad, 1 start, 2 end, 3..11 words. Four flat-coloured images and their captions.
  const std::vector<std::vector<int64_t>> captions{{3, 4}, {5, 6, 7}, {8}, {9, 10, 11, 3}};
  std::vector<float> px;
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 256; ++p) px.push_back(float(((k + c) % 3) == 0) - 0.5f + 0.3f * float(k == 3 && c == 2));
  const Tensor images = from_vector(px, {4, 3, 16, 16});
  std::vector<int64_t> rows(4 * 6, 0);
  for (size_t i = 0; i < 4; ++i) {
    rows[i * 6] = 1;
    for (size_t j = 0; j < captions[i].size(); ++j) rows[i * 6 + 1 + j] = captions[i][j];
    rows[i * 6 + 1 + captions[i].size()] = 2;
  }
  const Tensor ids = from_vector(rows, {4, 6});
  Captioner m(tiny());
  optim::AdamW opt(m.parameters(), {.lr = 3e-3});
  double first = 0, last = 0;
  for (int step = 0; step < 120; ++step) {
    opt.zero_grad();
    Tensor loss = caption_loss(m, images, ids, 0);
    backward(loss);
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.05 * first);
  m.eval();
  for (int64_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    std::vector<int64_t> want = captions[size_t(i)];
    want.push_back(2);
    Tensor mem;
    {
      NoGradGuard no_grad;
      mem = m.memory(slice(images, 0, i, i + 1));
    }
    EXPECT_EQ(greedy_decode(m.next_token_log_probs(mem), 1, 2, 7).tokens, want);
    const auto beams = beam_search(m.next_token_log_probs(mem), 1, 2, 7, 3);
    ASSERT_FALSE(beams.empty());
    EXPECT_EQ(beams[0].tokens, want);
  }
}

TEST(Captioner, LossIgnoresPaddingAndChecksShapes) {
  Captioner m(tiny());
  Generator g(2);
  const Tensor images = randn({2, 3, 16, 16}, DType::Float32, &g);
  // The same captions padded by 0 and by 3 more pads: the same loss.
  const Tensor a = from_vector(std::vector<int64_t>{1, 5, 2, 1, 6, 2}, {2, 3});
  const Tensor b = from_vector(std::vector<int64_t>{1, 5, 2, 0, 0, 0, 1, 6, 2, 0, 0, 0}, {2, 6});
  m.eval();
  NoGradGuard no_grad;
  EXPECT_NEAR(caption_loss(m, images, a, 0).item<double>(), caption_loss(m, images, b, 0).item<double>(), 1e-5);
  EXPECT_THROW(caption_loss(m, images, from_vector(std::vector<int64_t>{1, 2}, {1, 2}), 0), ShapeError);
  EXPECT_THROW(m.decode(m.memory(images), from_vector(std::vector<int64_t>(18, 1), {2, 9})), ShapeError);
  CaptionerConfig bad = tiny();
  bad.width = 30;  // not a multiple of 4 heads
  bad.heads = 4;
  EXPECT_THROW(Captioner{bad}, ValueError);
}

}  // namespace
}  // namespace skiff::multimodal
