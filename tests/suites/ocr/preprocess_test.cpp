// Tests of suites/ocr/preprocess.h: detector resize rule and normalization,
// recognizer/classifier batches, aspect-ratio ordering.
#include "suites/ocr/preprocess.h"

#include <gtest/gtest.h>

#include <vector>

#include "framework/core/error.h"

namespace skiff::ocr {
namespace {

struct Size2 {
  int h, w;
};

Size2 det_size(int h, int w, DetPreprocessParams p = {}) {
  const DetInputInfo i = det_input_info(h, w, p);
  return {i.resized_h, i.resized_w};
}

TEST(DetPreprocessTest, ResizeRuleMatchesDetResizeForTest) {
  // Small image, no scaling: round(100/32)=3, round(200/32)=6.
  EXPECT_EQ(det_size(100, 200).h, 96);
  EXPECT_EQ(det_size(100, 200).w, 192);
  // Long side 1280 > 960: ratio 0.75 -> 540 x 960 -> 544 x 960.
  EXPECT_EQ(det_size(720, 1280).h, 544);
  EXPECT_EQ(det_size(720, 1280).w, 960);
  // Python round ties to even: 80/32 = 2.5 -> 2, 48/32 = 1.5 -> 2, 112/32 = 3.5 -> 4.
  EXPECT_EQ(det_size(80, 48).h, 64);
  EXPECT_EQ(det_size(80, 48).w, 64);
  EXPECT_EQ(det_size(112, 300).h, 128);
  EXPECT_EQ(det_size(112, 300).w, 288);
  // Huge and thin: ratio 0.096 -> 960 x int(19.2) = 19 -> 960 x 32 (at least 32).
  EXPECT_EQ(det_size(10000, 200).h, 960);
  EXPECT_EQ(det_size(10000, 200).w, 32);
  // Square above the limit uses the width branch.
  EXPECT_EQ(det_size(2000, 2000).h, 960);
  EXPECT_EQ(det_size(2000, 2000).w, 960);
}

TEST(DetPreprocessTest, TinyImageIsPaddedTo32) {
  const DetInputInfo i = det_input_info(5, 7);
  EXPECT_EQ(i.src_h, 5);
  EXPECT_EQ(i.src_w, 7);
  EXPECT_EQ(i.padded_h, 32);
  EXPECT_EQ(i.padded_w, 32);
  EXPECT_EQ(i.resized_h, 32);
  EXPECT_EQ(i.resized_w, 32);
  EXPECT_FLOAT_EQ(i.ratio_h, 1.0f);
  EXPECT_FLOAT_EQ(i.ratio_w, 1.0f);
  // h + w >= 64 is not padded: 10 x 60 -> round(10/32)=0 -> 32, round(60/32)=2 -> 64.
  const DetInputInfo j = det_input_info(10, 60);
  EXPECT_EQ(j.padded_h, 10);
  EXPECT_EQ(j.resized_h, 32);
  EXPECT_EQ(j.resized_w, 64);
  EXPECT_FLOAT_EQ(j.ratio_h, 3.2f);
}

TEST(DetPreprocessTest, MinLimitTypeScalesUp) {
  DetPreprocessParams p;
  p.limit_type = LimitType::Min;
  p.limit_side_len = 736;
  EXPECT_EQ(det_size(100, 200, p).h, 736);
  EXPECT_EQ(det_size(100, 200, p).w, 1472);
  EXPECT_EQ(det_size(800, 900, p).h, 800);  // already >= 736: unchanged, round(25)=25
  EXPECT_EQ(det_size(800, 900, p).w, 896);
}

TEST(DetPreprocessTest, RejectsBadSizes) {
  EXPECT_THROW(det_input_info(0, 10), ValueError);
  DetPreprocessParams p;
  p.limit_side_len = 0;
  EXPECT_THROW(det_input_info(10, 10, p), ValueError);
}

float det_norm(int v, int c) {
  const float mean[3] = {0.485f, 0.456f, 0.406f};
  const float stdv[3] = {0.229f, 0.224f, 0.225f};
  return (float(v) * float(1.0 / 255.0) - mean[c]) / stdv[c];
}

TEST(DetPreprocessTest, NormalizesBgrChannelsInOrderIntoNchw) {
  cv::Mat img(64, 96, CV_8UC3, cv::Scalar(10, 20, 30));
  img.at<cv::Vec3b>(1, 2) = cv::Vec3b(255, 0, 128);  // B, G, R
  std::vector<float> out;
  const DetInputInfo info = preprocess_det(img, out);
  ASSERT_EQ(info.resized_h, 64);
  ASSERT_EQ(info.resized_w, 96);
  ASSERT_EQ(out.size(), 3u * 64 * 96);
  const std::size_t plane = 64 * 96, at = 1 * 96 + 2;
  EXPECT_FLOAT_EQ(out[0 * plane + at], det_norm(255, 0));  // B with mean 0.485
  EXPECT_FLOAT_EQ(out[1 * plane + at], det_norm(0, 1));
  EXPECT_FLOAT_EQ(out[2 * plane + at], det_norm(128, 2));
  EXPECT_NEAR(out[0 * plane + at], (1.0f - 0.485f) / 0.229f, 1e-5);
  EXPECT_NEAR(out[1 * plane + at], -0.456f / 0.224f, 1e-5);
  EXPECT_FLOAT_EQ(out[0], det_norm(10, 0));
  EXPECT_FLOAT_EQ(out[plane + plane - 1], det_norm(20, 1));
  EXPECT_FLOAT_EQ(out[2 * plane + 5], det_norm(30, 2));
}

TEST(DetPreprocessTest, HugeImageIsResizedBeforeConversion) {
  cv::Mat img(10000, 200, CV_8UC3, cv::Scalar(200, 100, 50));
  std::vector<float> out;
  const DetInputInfo info = preprocess_det(img, out);
  EXPECT_EQ(info.resized_h, 960);
  EXPECT_EQ(info.resized_w, 32);
  ASSERT_EQ(out.size(), 3u * 960 * 32);
  const std::size_t plane = 960 * 32;
  for (std::size_t i : {std::size_t(0), plane / 2, plane - 1}) {
    EXPECT_FLOAT_EQ(out[i], det_norm(200, 0));
    EXPECT_FLOAT_EQ(out[plane + i], det_norm(100, 1));
    EXPECT_FLOAT_EQ(out[2 * plane + i], det_norm(50, 2));
  }
  EXPECT_NEAR(info.ratio_h, 0.096f, 1e-6);
  EXPECT_NEAR(info.ratio_w, 0.16f, 1e-6);
}

TEST(DetPreprocessTest, TinyImagePaddingIsZeroPixels) {
  cv::Mat img(5, 7, CV_8UC3, cv::Scalar(255, 255, 255));
  std::vector<float> out;
  preprocess_det(img, out);
  ASSERT_EQ(out.size(), 3u * 32 * 32);
  EXPECT_FLOAT_EQ(out[0], det_norm(255, 0));          // inside the image
  EXPECT_FLOAT_EQ(out[4 * 32 + 6], det_norm(255, 0));  // last source pixel
  EXPECT_FLOAT_EQ(out[5 * 32 + 0], det_norm(0, 0));    // padding below
  EXPECT_FLOAT_EQ(out[0 * 32 + 7], det_norm(0, 0));    // padding to the right
}

TEST(DetPreprocessTest, RejectsWrongTypeAndSmallBuffer) {
  cv::Mat gray(64, 64, CV_8UC1, cv::Scalar(0));
  std::vector<float> out;
  EXPECT_THROW(preprocess_det(gray, out), ValueError);
  EXPECT_THROW(preprocess_det(cv::Mat(), out), ValueError);
  cv::Mat img(64, 64, CV_8UC3, cv::Scalar(0, 0, 0));
  std::vector<float> small(3 * 64 * 64 - 1);
  EXPECT_THROW(preprocess_det(img, std::span<float>(small)), ValueError);
}

TEST(RecPreprocessTest, BatchWidthFollowsWidestCropAndBase) {
  std::vector<cv::Mat> narrow = {cv::Mat(48, 100, CV_8UC3), cv::Mat(32, 64, CV_8UC3)};
  EXPECT_EQ(rec_batch_width(narrow), 320);  // never below 48 * 320 / 48
  std::vector<cv::Mat> wide = {cv::Mat(48, 100, CV_8UC3), cv::Mat(32, 320, CV_8UC3)};
  EXPECT_EQ(rec_batch_width(wide), 480);  // ratio 10
  RecPreprocessParams no_base;
  no_base.base_width = 0;
  EXPECT_EQ(rec_batch_width(narrow, no_base), 100);  // int(48 * 100 / 48)
  std::vector<cv::Mat> odd = {cv::Mat(30, 101, CV_8UC3)};
  EXPECT_EQ(rec_batch_width(odd, no_base), 161);  // int(48 * 3.3666...) = int(161.6)
  RecPreprocessParams fixed;
  fixed.fixed_width = 256;
  EXPECT_EQ(rec_batch_width(wide, fixed), 256);
  EXPECT_THROW(rec_batch_width(std::vector<cv::Mat>{}), ValueError);
}

TEST(RecPreprocessTest, ResizesKeepingRatioNormalizesAndPadsRight) {
  std::vector<cv::Mat> crops = {cv::Mat(24, 50, CV_8UC3, cv::Scalar(255, 255, 255)),
                                cv::Mat(10, 25, CV_8UC3, cv::Scalar(0, 0, 0))};
  std::vector<float> out;
  const int w = preprocess_rec_batch(crops, out);
  ASSERT_EQ(w, 320);
  ASSERT_EQ(out.size(), 2u * 3 * 48 * 320);
  const std::size_t plane = 48 * 320, image = 3 * plane;
  // Crop 0: 24x50 -> 48 x ceil(48 * 50 / 24) = 100 wide, white -> 1.0.
  EXPECT_FLOAT_EQ(out[0], 1.0f);
  EXPECT_FLOAT_EQ(out[2 * plane + 47 * 320 + 99], 1.0f);
  EXPECT_FLOAT_EQ(out[2 * plane + 47 * 320 + 100], 0.0f);  // padding
  EXPECT_FLOAT_EQ(out[319], 0.0f);
  // Crop 1: 10x25 -> ceil(120) = 120 wide, black -> -1.0.
  EXPECT_FLOAT_EQ(out[image + 119], -1.0f);
  EXPECT_FLOAT_EQ(out[image + plane + 20 * 320 + 119], -1.0f);
  EXPECT_FLOAT_EQ(out[image + 120], 0.0f);
}

TEST(RecPreprocessTest, NormalizesKnownPixel) {
  cv::Mat crop(48, 48, CV_8UC3, cv::Scalar(51, 102, 204));
  std::vector<float> out;
  preprocess_rec_batch(std::span<const cv::Mat>(&crop, 1), out);
  const std::size_t plane = 48 * 320;
  EXPECT_FLOAT_EQ(out[0], (51.0f / 255.0f - 0.5f) / 0.5f);
  EXPECT_NEAR(out[0], -0.6f, 1e-6);
  EXPECT_NEAR(out[plane], -0.2f, 1e-6);
  EXPECT_NEAR(out[2 * plane], 0.6f, 1e-6);
}

TEST(RecPreprocessTest, WideCropIsCappedAtBatchWidth) {
  RecPreprocessParams fixed;
  fixed.fixed_width = 320;
  cv::Mat crop(10, 1000, CV_8UC3, cv::Scalar(255, 255, 255));
  std::vector<float> out;
  EXPECT_EQ(preprocess_rec_batch(std::span<const cv::Mat>(&crop, 1), out, fixed), 320);
  EXPECT_FLOAT_EQ(out[319], 1.0f);  // fills the whole width, no padding
  EXPECT_FLOAT_EQ(out[47 * 320 + 319], 1.0f);
}

TEST(RecPreprocessTest, RejectsBadCropsAndSmallBuffer) {
  std::vector<float> out;
  std::vector<cv::Mat> gray = {cv::Mat(48, 48, CV_8UC1, cv::Scalar(0))};
  EXPECT_THROW(preprocess_rec_batch(gray, out), ValueError);
  std::vector<cv::Mat> empty_crop = {cv::Mat()};
  EXPECT_THROW(preprocess_rec_batch(empty_crop, out), ValueError);
  std::vector<cv::Mat> ok = {cv::Mat(48, 48, CV_8UC3, cv::Scalar(0, 0, 0))};
  std::vector<float> small(10);
  EXPECT_THROW(preprocess_rec_batch(ok, std::span<float>(small)), ValueError);
}

TEST(RecPreprocessTest, SortsByAspectRatioStably) {
  std::vector<cv::Mat> crops = {cv::Mat(10, 30, CV_8UC3), cv::Mat(10, 10, CV_8UC3), cv::Mat(10, 20, CV_8UC3),
                                cv::Mat(20, 20, CV_8UC3)};
  const std::vector<std::size_t> order = sort_by_aspect_ratio(crops);
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 3, 2, 0}));
}

TEST(ClsPreprocessTest, FixedShapeWithPadding) {
  std::vector<cv::Mat> crops = {cv::Mat(48, 48, CV_8UC3, cv::Scalar(255, 255, 255)),
                                cv::Mat(10, 500, CV_8UC3, cv::Scalar(255, 255, 255))};
  std::vector<float> out;
  preprocess_cls_batch(crops, out);
  ASSERT_EQ(out.size(), 2u * 3 * 48 * 192);
  const std::size_t plane = 48 * 192, image = 3 * plane;
  EXPECT_FLOAT_EQ(out[47], 1.0f);
  EXPECT_FLOAT_EQ(out[48], 0.0f);  // padding after 48 columns
  EXPECT_FLOAT_EQ(out[2 * plane + 47 * 192 + 191], 0.0f);
  EXPECT_FLOAT_EQ(out[image + 191], 1.0f);  // 10x500 is capped at 192
  EXPECT_FLOAT_EQ(out[image + 2 * plane + 47 * 192 + 191], 1.0f);
  std::vector<float> small(10);
  EXPECT_THROW(preprocess_cls_batch(crops, std::span<float>(small)), ValueError);
}

}  // namespace
}  // namespace skiff::ocr
