// Tests of suites/ocr/geometry.h: point ordering, minimum-area boxes, clipping.
#include "suites/ocr/geometry.h"

#include <gtest/gtest.h>

#include <vector>

#include "framework/core/error.h"

namespace skiff::ocr {
namespace {

void expect_point(cv::Point2f p, float x, float y) {
  EXPECT_FLOAT_EQ(p.x, x);
  EXPECT_FLOAT_EQ(p.y, y);
}

TEST(GeometryTest, OrdersShuffledRectangleClockwiseFromTopLeft) {
  const Quad q{{cv::Point2f(110, 50), cv::Point2f(10, 20), cv::Point2f(10, 50), cv::Point2f(110, 20)}};
  const Quad o = order_points_clockwise(q);
  expect_point(o.pts[0], 10, 20);
  expect_point(o.pts[1], 110, 20);
  expect_point(o.pts[2], 110, 50);
  expect_point(o.pts[3], 10, 50);
}

TEST(GeometryTest, OrdersTiltedQuadBySumAndDifference) {
  // A quad tilted by ~20 degrees: tl has the smallest x+y, br the largest,
  // tr the smallest y-x.
  const Quad q{{cv::Point2f(20, 90), cv::Point2f(10, 50), cv::Point2f(105, 35), cv::Point2f(115, 75)}};
  const Quad o = order_points_clockwise(q);
  expect_point(o.pts[0], 10, 50);
  expect_point(o.pts[1], 105, 35);
  expect_point(o.pts[2], 115, 75);
  expect_point(o.pts[3], 20, 90);
}

TEST(GeometryTest, MinAreaBoxOfAxisAlignedPoints) {
  const std::vector<cv::Point> pts = {{30, 20}, {30, 39}, {129, 39}, {129, 20}};
  const MiniBox b = min_area_box(pts);
  EXPECT_FLOAT_EQ(b.short_side, 19.0f);
  expect_point(b.quad.pts[0], 30, 20);
  expect_point(b.quad.pts[1], 129, 20);
  expect_point(b.quad.pts[2], 129, 39);
  expect_point(b.quad.pts[3], 30, 39);
}

TEST(GeometryTest, MinAreaBoxOfRotatedRectangleOrdersCorners) {
  const cv::RotatedRect r(cv::Point2f(100, 100), cv::Size2f(80, 20), 30);
  std::array<cv::Point2f, 4> corners;
  r.points(corners.data());
  const MiniBox b = min_area_box(std::span<const cv::Point2f>(corners));
  EXPECT_NEAR(b.short_side, 20.0f, 1e-3);
  // Left-most two points: upper one first; right-most two: upper one second.
  EXPECT_LT(b.quad.pts[0].x, b.quad.pts[1].x);
  EXPECT_LT(b.quad.pts[0].y, b.quad.pts[3].y);
  EXPECT_LT(b.quad.pts[1].y, b.quad.pts[2].y);
  EXPECT_NEAR(edge_length(b.quad.pts[0], b.quad.pts[1]) * edge_length(b.quad.pts[1], b.quad.pts[2]), 1600.0f, 0.1f);
}

TEST(GeometryTest, MinAreaBoxRejectsNoPoints) {
  EXPECT_THROW(min_area_box(std::span<const cv::Point>()), ValueError);
}

TEST(GeometryTest, ClipTruncatesIntoImage) {
  const Quad q{{cv::Point2f(-3.5f, 10.7f), cv::Point2f(250.2f, 5.0f), cv::Point2f(150.9f, 99.9f),
                cv::Point2f(20.0f, 130.0f)}};
  const Quad c = clip_to_image(q, 200, 100);
  expect_point(c.pts[0], 0, 10);
  expect_point(c.pts[1], 199, 5);
  expect_point(c.pts[2], 150, 99);
  expect_point(c.pts[3], 20, 99);
  EXPECT_THROW(clip_to_image(q, 0, 100), ValueError);
}

TEST(GeometryTest, EdgeLength) {
  EXPECT_FLOAT_EQ(edge_length({0, 0}, {3, 4}), 5.0f);
  EXPECT_FLOAT_EQ(edge_length({10, 10}, {10, 2}), 8.0f);
}

}  // namespace
}  // namespace skiff::ocr
