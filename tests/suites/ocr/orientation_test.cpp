// Tests of suites/ocr/orientation.h.
#include "suites/ocr/orientation.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"

namespace skiff::ocr {
namespace {

TEST(OrientationTest, DecodesArgmaxAndScore) {
  const float up[2] = {0.97f, 0.03f};
  const Orientation a = decode_orientation(up);
  EXPECT_EQ(a.angle, 0);
  EXPECT_FLOAT_EQ(a.score, 0.97f);
  const float flipped[2] = {0.3f, 0.7f};
  const Orientation b = decode_orientation(flipped);
  EXPECT_EQ(b.angle, 180);
  EXPECT_FLOAT_EQ(b.score, 0.7f);
  const float tie[2] = {0.5f, 0.5f};
  EXPECT_EQ(decode_orientation(tie).angle, 0);
  EXPECT_THROW(decode_orientation(nullptr), ValueError);
}

TEST(OrientationTest, RotatesOnlyConfident180) {
  EXPECT_FALSE(needs_rotation({180, 0.7f}));
  EXPECT_FALSE(needs_rotation({180, 0.9f}));  // strictly greater than cls_thresh
  EXPECT_TRUE(needs_rotation({180, 0.95f}));
  EXPECT_FALSE(needs_rotation({0, 0.99f}));
  EXPECT_TRUE(needs_rotation({180, 0.7f}, 0.5f));
}

TEST(OrientationTest, Rotate180MovesCorners) {
  cv::Mat img(2, 3, CV_8UC3, cv::Scalar(0, 0, 0));
  img.at<cv::Vec3b>(0, 0) = cv::Vec3b(1, 2, 3);
  img.at<cv::Vec3b>(0, 2) = cv::Vec3b(4, 5, 6);
  const cv::Mat r = rotate_180(img);
  ASSERT_EQ(r.size(), img.size());
  EXPECT_EQ(r.at<cv::Vec3b>(1, 2), cv::Vec3b(1, 2, 3));
  EXPECT_EQ(r.at<cv::Vec3b>(1, 0), cv::Vec3b(4, 5, 6));
  EXPECT_EQ(r.at<cv::Vec3b>(0, 0), cv::Vec3b(0, 0, 0));
  EXPECT_TRUE(rotate_180(cv::Mat()).empty());
}

}  // namespace
}  // namespace skiff::ocr
