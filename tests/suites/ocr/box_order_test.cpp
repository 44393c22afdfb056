// Tests of suites/ocr/box_order.h against PaddleOCR's sorted_boxes semantics.
#include "suites/ocr/box_order.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace skiff::ocr {
namespace {

TextBox box_at(float x, float y, float score = 1.0f) {
  return TextBox{Quad{{cv::Point2f(x, y), cv::Point2f(x + 40, y), cv::Point2f(x + 40, y + 20),
                       cv::Point2f(x, y + 20)}},
                 score};
}

std::vector<std::pair<float, float>> corners(const std::vector<TextBox>& boxes) {
  std::vector<std::pair<float, float>> out;
  for (const auto& b : boxes) out.emplace_back(b.quad.pts[0].x, b.quad.pts[0].y);
  return out;
}

using Corners = std::vector<std::pair<float, float>>;

TEST(BoxOrderTest, JitteredLinesReadLeftToRight) {
  std::vector<TextBox> boxes = {box_at(200, 49), box_at(300, 12), box_at(20, 55), box_at(10, 10),
                                box_at(150, 15)};
  sort_reading_order(boxes);
  EXPECT_EQ(corners(boxes), (Corners{{10, 10}, {150, 15}, {300, 12}, {20, 55}, {200, 49}}));
}

TEST(BoxOrderTest, DistantLinesStayTopToBottom) {
  // 10 px apart is not the same line (strictly less than 10 is).
  std::vector<TextBox> boxes = {box_at(0, 20), box_at(100, 10)};
  sort_reading_order(boxes);
  EXPECT_EQ(corners(boxes), (Corners{{100, 10}, {0, 20}}));
  std::vector<TextBox> close = {box_at(0, 19.5f), box_at(100, 10)};
  sort_reading_order(close);
  EXPECT_EQ(corners(close), (Corners{{0, 19.5f}, {100, 10}}));
}

TEST(BoxOrderTest, ChainsFollowPaddleOcrAdjacentSwaps) {
  // (50,8) is on the line of (100,0) and moves before it; (0,16) is 16 px below
  // (100,0), its left neighbour, so it stops there although it is on (50,8)'s line.
  std::vector<TextBox> boxes = {box_at(0, 16), box_at(100, 0), box_at(50, 8)};
  sort_reading_order(boxes);
  EXPECT_EQ(corners(boxes), (Corners{{50, 8}, {100, 0}, {0, 16}}));
}

TEST(BoxOrderTest, BubblesAcrossSeveralBoxesOfOneLine) {
  std::vector<TextBox> boxes = {box_at(400, 0), box_at(300, 1), box_at(200, 2), box_at(100, 3), box_at(0, 4)};
  sort_reading_order(boxes);
  EXPECT_EQ(corners(boxes), (Corners{{0, 4}, {100, 3}, {200, 2}, {300, 1}, {400, 0}}));
}

TEST(BoxOrderTest, StableForEqualBoxesAndRobustToNan) {
  std::vector<TextBox> boxes = {box_at(5, 5, 0.1f), box_at(5, 5, 0.2f), box_at(5, 5, 0.3f)};
  sort_reading_order(boxes);
  EXPECT_FLOAT_EQ(boxes[0].score, 0.1f);
  EXPECT_FLOAT_EQ(boxes[1].score, 0.2f);
  EXPECT_FLOAT_EQ(boxes[2].score, 0.3f);

  std::vector<TextBox> with_nan = {box_at(NAN, NAN), box_at(10, 50), box_at(0, 0)};
  sort_reading_order(with_nan);
  ASSERT_EQ(with_nan.size(), 3u);
  EXPECT_FLOAT_EQ(with_nan[0].quad.pts[0].y, 0);
  EXPECT_FLOAT_EQ(with_nan[1].quad.pts[0].y, 50);
  EXPECT_TRUE(std::isnan(with_nan[2].quad.pts[0].y));

  std::vector<TextBox> empty;
  sort_reading_order(empty);
  EXPECT_TRUE(empty.empty());
}

}  // namespace
}  // namespace skiff::ocr
