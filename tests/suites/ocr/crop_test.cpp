// Tests of suites/ocr/crop.h on images with drawn regions of known geometry.
#include "suites/ocr/crop.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"

namespace skiff::ocr {
namespace {

Quad rect_quad(float x0, float y0, float x1, float y1) {
  return Quad{{cv::Point2f(x0, y0), cv::Point2f(x1, y0), cv::Point2f(x1, y1), cv::Point2f(x0, y1)}};
}

// 200 x 200 BGR image with pixel (y, x) = (x, y, (x + y) % 256).
cv::Mat gradient() {
  cv::Mat img(200, 200, CV_8UC3);
  for (int y = 0; y < img.rows; ++y)
    for (int x = 0; x < img.cols; ++x) img.at<cv::Vec3b>(y, x) = cv::Vec3b(x, y, (x + y) % 256);
  return img;
}

TEST(CropTest, AxisAlignedQuadIsATranslatedCopy) {
  const cv::Mat img = gradient();
  const cv::Mat crop = crop_text_region(img, rect_quad(10, 20, 110, 50));
  ASSERT_EQ(crop.cols, 100);
  ASSERT_EQ(crop.rows, 30);
  EXPECT_EQ(crop.type(), CV_8UC3);
  for (int y = 0; y < crop.rows; y += 7)
    for (int x = 0; x < crop.cols; x += 9) EXPECT_EQ(crop.at<cv::Vec3b>(y, x), img.at<cv::Vec3b>(20 + y, 10 + x));
}

TEST(CropTest, SizeUsesLongerOfOppositeEdges) {
  // Top edge 100, bottom edge 80; left 30, right 40 (trapezoid).
  const Quad q{{cv::Point2f(0, 0), cv::Point2f(100, 0), cv::Point2f(90, 40), cv::Point2f(10, 30)}};
  const cv::Size s = crop_size(q);
  EXPECT_EQ(s.width, 100);
  EXPECT_EQ(s.height, int(std::sqrt(100.0f + 1600.0f)));  // |p1 p2| = sqrt(10^2 + 40^2) = 41.2
}

TEST(CropTest, TallRegionIsRotatedCounterClockwise) {
  cv::Mat img(200, 200, CV_8UC3, cv::Scalar(0, 0, 0));
  img(cv::Rect(50, 10, 20, 50)).setTo(cv::Scalar(0, 0, 255));   // upper half red
  img(cv::Rect(50, 60, 20, 50)).setTo(cv::Scalar(255, 0, 0));   // lower half blue
  const cv::Mat crop = crop_text_region(img, rect_quad(50, 10, 70, 110));
  // 20 x 100 has h / w = 5 >= 1.5: rotated to 100 x 20, the top going left.
  ASSERT_EQ(crop.cols, 100);
  ASSERT_EQ(crop.rows, 20);
  EXPECT_EQ(crop.at<cv::Vec3b>(10, 5), cv::Vec3b(0, 0, 255));
  EXPECT_EQ(crop.at<cv::Vec3b>(10, 94), cv::Vec3b(255, 0, 0));
  // Counter-clockwise: the region's right column becomes the crop's top row.
  img.col(69).rowRange(10, 110).setTo(cv::Scalar(0, 255, 0));
  const cv::Mat marked = crop_text_region(img, rect_quad(50, 10, 70, 110));
  EXPECT_EQ(marked.at<cv::Vec3b>(0, 50), cv::Vec3b(0, 255, 0));
  EXPECT_NE(marked.at<cv::Vec3b>(19, 50), cv::Vec3b(0, 255, 0));
}

TEST(CropTest, RotationThresholdIsOneAndAHalf) {
  const cv::Mat img = gradient();
  const cv::Mat at = crop_text_region(img, rect_quad(0, 0, 20, 30));  // 30 / 20 = 1.5
  EXPECT_EQ(at.cols, 30);
  EXPECT_EQ(at.rows, 20);
  const cv::Mat below = crop_text_region(img, rect_quad(0, 0, 20, 29));
  EXPECT_EQ(below.cols, 20);
  EXPECT_EQ(below.rows, 29);
}

TEST(CropTest, RotatedRectangleIsStraightened) {
  cv::Mat img(200, 200, CV_8UC3, cv::Scalar(0, 0, 0));
  const cv::RotatedRect r(cv::Point2f(100, 100), cv::Size2f(80, 20), 30);
  cv::Point2f c[4];
  r.points(c);
  std::vector<cv::Point> poly;
  for (const auto& p : c) poly.emplace_back(cvRound(p.x), cvRound(p.y));
  cv::fillPoly(img, std::vector<std::vector<cv::Point>>{poly}, cv::Scalar(0, 200, 0));
  const Quad q = order_points_clockwise(Quad{{c[0], c[1], c[2], c[3]}});
  const cv::Mat crop = crop_text_region(img, q);
  EXPECT_NEAR(crop.cols, 80, 1);
  EXPECT_NEAR(crop.rows, 20, 1);
  int green = 0, total = 0;
  for (int y = 3; y < crop.rows - 3; ++y)
    for (int x = 3; x < crop.cols - 3; ++x, ++total)
      if (crop.at<cv::Vec3b>(y, x)[1] > 150 && crop.at<cv::Vec3b>(y, x)[0] < 50) ++green;
  EXPECT_GT(green, total * 95 / 100);
}

TEST(CropTest, RejectsEmptyImageAndDegenerateQuad) {
  EXPECT_THROW(crop_text_region(cv::Mat(), rect_quad(0, 0, 10, 10)), ValueError);
  const cv::Mat img = gradient();
  EXPECT_THROW(crop_text_region(img, rect_quad(10, 10, 10.5f, 40)), ValueError);
}

}  // namespace
}  // namespace skiff::ocr
