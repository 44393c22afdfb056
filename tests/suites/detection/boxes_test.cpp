// GFL decoding and class-aware NMS on hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>

#include "framework/core/error.h"
#include "suites/detection/boxes.h"

namespace skiff::detection {
namespace {

TEST(Boxes, IouOfOverlappingDisjointAndEmptyBoxes) {
  EXPECT_FLOAT_EQ(iou({0, 0, 2, 2}, {1, 1, 3, 3}), 1.f / 7.f);
  EXPECT_FLOAT_EQ(iou({0, 0, 2, 2}, {0, 0, 2, 2}), 1.f);
  EXPECT_EQ(iou({0, 0, 1, 1}, {2, 2, 3, 3}), 0.f);
  EXPECT_EQ(iou({0, 0, 0, 0}, {0, 0, 0, 0}), 0.f);
}

/// One side's logits putting (almost) all mass on bin k.
void peak(float* logits, int bins, int k) {
  for (int i = 0; i < bins; ++i) logits[i] = i == k ? 50.f : 0.f;
}

TEST(GflDecode, CentresDistancesAndStride) {
  // A 2 x 2 grid at stride 8, 2 classes, reg_max 3 (4 bins per side).
  const int bins = 4;
  std::vector<float> scores{0.1f, 0.0f,   // cell (0, 0)
                            0.0f, 0.0f,   // cell (0, 1)
                            0.0f, 0.0f,   // cell (1, 0)
                            0.9f, 0.6f};  // cell (1, 1): centre (12, 12)
  std::vector<float> logits(4 * 4 * bins, 0.f);  // all-equal logits: expectation (0+1+2+3)/4 = 1.5
  float* cell = logits.data() + 3 * 4 * bins;
  peak(cell + 0 * bins, bins, 1);  // left 1 * 8
  peak(cell + 1 * bins, bins, 2);  // top 2 * 8
  peak(cell + 2 * bins, bins, 0);  // right 0
  peak(cell + 3 * bins, bins, 3);  // bottom 3 * 8
  GflDecodeOptions o;
  o.num_classes = 2;
  o.reg_max = 3;
  o.score_threshold = 0.05f;
  auto boxes = decode_gfl({{scores, logits, 2, 8}}, o);
  ASSERT_EQ(boxes.size(), 3u);
  // Cell (0, 0), class 0: centre (4, 4), 1.5 bins = 12 px each side.
  EXPECT_EQ(boxes[0].class_id, 0);
  EXPECT_NEAR(boxes[0].box.x0, 4 - 12, 1e-4);
  EXPECT_NEAR(boxes[0].box.y1, 4 + 12, 1e-4);
  // Cell (1, 1): both classes, the same box.
  for (int k : {1, 2}) {
    EXPECT_NEAR(boxes[size_t(k)].box.x0, 12 - 8, 1e-4);
    EXPECT_NEAR(boxes[size_t(k)].box.y0, 12 - 16, 1e-4);
    EXPECT_NEAR(boxes[size_t(k)].box.x1, 12, 1e-4);
    EXPECT_NEAR(boxes[size_t(k)].box.y1, 12 + 24, 1e-4);
  }
  EXPECT_FLOAT_EQ(boxes[1].score, 0.9f);
  EXPECT_EQ(boxes[2].class_id, 1);

  // Clipping to the input, the threshold, and the per-level cell limit.
  o.clip_width = o.clip_height = 16;
  o.score_threshold = 0.5f;
  boxes = decode_gfl({{scores, logits, 2, 8}}, o);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].box.y0, 0.f);
  EXPECT_EQ(boxes[0].box.y1, 16.f);
  o.score_threshold = 0.05f;
  o.max_cells_per_level = 1;
  EXPECT_EQ(decode_gfl({{scores, logits, 2, 8}}, o).size(), 2u);  // only cell (1, 1)
}

TEST(GflDecode, MismatchedSizesAreErrors) {
  std::vector<float> scores(6), logits(10);
  GflDecodeOptions o;
  o.num_classes = 2;
  o.reg_max = 3;
  EXPECT_THROW(decode_gfl({{scores, logits, 3, 8}}, o), ValueError);
}

TEST(Nms, SuppressesOverlapsWithinAClassOnly) {
  std::vector<DetectedBox> in{{0, 0.6f, {0, 0, 10, 10}},   // overlaps the 0.9 box by IoU 0.81
                              {0, 0.9f, {0, 0, 10, 9}},
                              {1, 0.8f, {0, 0, 10, 10}},   // another class: kept
                              {0, 0.7f, {20, 20, 30, 30}}, // far away: kept
                              {0, 0.5f, {0, 0, 10, 5}}};   // IoU 0.5 / 0.9 with the 0.9 box
  auto out = class_aware_nms(in, 0.6f, 0);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_FLOAT_EQ(out[0].score, 0.9f);
  EXPECT_FLOAT_EQ(out[1].score, 0.8f);
  EXPECT_FLOAT_EQ(out[2].score, 0.7f);
  EXPECT_FLOAT_EQ(out[3].score, 0.5f);  // 0.556 <= 0.6: kept
  EXPECT_EQ(class_aware_nms(in, 0.6f, 2).size(), 2u);
  EXPECT_EQ(class_aware_nms(in, 0.5f, 0).size(), 3u);
}

}  // namespace
}  // namespace skiff::detection
