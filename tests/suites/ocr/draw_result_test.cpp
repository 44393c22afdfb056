// Tests of draw_ocr_result(): layout, determinism, text in the right half.
#include "suites/ocr/draw_result.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "suites/ocr/synth.h"

namespace skiff::ocr {
namespace {

using Quad = std::array<cv::Point2f, 4>;

std::vector<Quad> quads_of(const SynthImage& s) {
  std::vector<Quad> q;
  for (const SynthLine& l : s.lines) q.push_back(l.quad);
  return q;
}
std::vector<std::string> texts_of(const SynthImage& s) {
  std::vector<std::string> t;
  for (const SynthLine& l : s.lines) t.push_back(l.text);
  return t;
}

cv::Mat quad_mask(cv::Size size, const Quad& q, int erode = 0) {
  cv::Mat m = cv::Mat::zeros(size, CV_8UC1);
  std::vector<cv::Point> poly;
  for (const cv::Point2f& p : q) poly.emplace_back(cvRound(p.x), cvRound(p.y));
  cv::fillPoly(m, std::vector{poly}, 255);
  if (erode > 0) cv::erode(m, m, cv::Mat::ones(2 * erode + 1, 2 * erode + 1, CV_8UC1));
  return m;
}

// Near-black pixels: rendered text (box outlines are saturated colours).
cv::Mat dark(const cv::Mat& bgr) {
  cv::Mat gray;
  cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  return gray < 80;
}

TEST(DrawResultTest, SideBySideWithTextInEveryBox) {
  SynthOptions o;
  o.max_rotation_deg = 5;
  const SynthImage s = render_synth_image(o, 11);
  const std::vector<float> scores(s.lines.size(), 0.9f);
  const cv::Mat out = draw_ocr_result(s.image, quads_of(s), texts_of(s), scores);
  ASSERT_EQ(out.type(), CV_8UC3);
  ASSERT_EQ(out.rows, s.image.rows);
  ASSERT_EQ(out.cols, 2 * s.image.cols);
  const cv::Mat right = out(cv::Rect(s.image.cols, 0, s.image.cols, s.image.rows));
  const cv::Mat text = dark(right);
  for (const SynthLine& l : s.lines) {
    const cv::Mat inside = quad_mask(right.size(), l.quad, 3);
    const double share =
        cv::countNonZero(text & inside) / static_cast<double>(cv::countNonZero(inside));
    EXPECT_GT(share, 0.05) << l.text;
  }
  // Outside the boxes the right half stays white (no text spills out).
  cv::Mat boxes = cv::Mat::zeros(right.size(), CV_8UC1);
  for (const SynthLine& l : s.lines) boxes |= quad_mask(right.size(), l.quad);
  cv::dilate(boxes, boxes, cv::Mat::ones(7, 7, CV_8UC1));
  EXPECT_EQ(cv::countNonZero(text & ~boxes), 0);
  // The left half is the input with tinted boxes: still close to it outside the boxes.
  const cv::Mat left = out(cv::Rect(0, 0, s.image.cols, s.image.rows));
  cv::Mat diff, changed;
  cv::absdiff(left, s.image, diff);
  cv::transform(diff, changed, cv::Matx13f(1, 1, 1));
  EXPECT_EQ(cv::countNonZero((changed > 0) & ~boxes), 0);
  EXPECT_GT(cv::countNonZero((changed > 0) & boxes), 0);
}

TEST(DrawResultTest, IsDeterministic) {
  const SynthImage s = render_synth_image({}, 4);
  const cv::Mat a = draw_ocr_result(s.image, quads_of(s), texts_of(s), {});
  const cv::Mat b = draw_ocr_result(s.image, quads_of(s), texts_of(s), {});
  EXPECT_EQ(cv::norm(a, b, cv::NORM_INF), 0.0);
}

TEST(DrawResultTest, DropsLowScoresAndHandlesOddBoxes) {
  cv::Mat gray(200, 300, CV_8UC1, cv::Scalar(128));
  const std::vector<Quad> quads = {
      Quad{cv::Point2f(10, 10), {150, 10}, {150, 50}, {10, 50}},      // kept
      Quad{cv::Point2f(10, 100), {150, 100}, {150, 140}, {10, 140}},  // dropped (score)
      Quad{cv::Point2f(250, 10), {290, 10}, {290, 190}, {250, 190}},  // vertical
  };
  const std::vector<std::string> texts = {"保留 keep", "丢弃 drop", "竖排文字"};
  const cv::Mat out = draw_ocr_result(gray, quads, texts, {0.9f, 0.2f, 0.8f});
  ASSERT_EQ(out.size(), cv::Size(600, 200));
  const cv::Mat text = dark(out(cv::Rect(300, 0, 300, 200)));
  EXPECT_GT(cv::countNonZero(text & quad_mask(text.size(), quads[0], 2)), 50);
  EXPECT_EQ(cv::countNonZero(text & quad_mask(text.size(), quads[1])), 0);
  EXPECT_GT(cv::countNonZero(text & quad_mask(text.size(), quads[2], 2)), 50);
  // The vertical text runs down the box: ink in its top and bottom quarters.
  EXPECT_GT(cv::countNonZero(text(cv::Rect(250, 10, 40, 45))), 10);
  EXPECT_GT(cv::countNonZero(text(cv::Rect(250, 145, 40, 45))), 10);
}

TEST(DrawResultTest, RejectsMismatchedInputs) {
  const cv::Mat img(50, 50, CV_8UC3, cv::Scalar::all(255));
  const std::vector<Quad> one = {Quad{cv::Point2f(1, 1), {20, 1}, {20, 10}, {1, 10}}};
  EXPECT_THROW(draw_ocr_result(img, one, {}, {}), ValueError);
  EXPECT_THROW(draw_ocr_result(img, one, {"a"}, {0.5f, 0.6f}), ValueError);
  EXPECT_THROW(draw_ocr_result(cv::Mat(), {}, {}, {}), ValueError);
  EXPECT_EQ(draw_ocr_result(img, {}, {}, {}).size(), cv::Size(100, 50));
}

TEST(DrawResultTest, DetectionBoxesAreOutlined) {
  cv::Mat gray(60, 100, CV_8UC1, cv::Scalar(200));
  std::vector<std::array<cv::Point2f, 4>> quads{{{{10, 10}, {90, 10}, {90, 50}, {10, 50}}}};
  cv::Mat out = draw_det_result(gray, quads);
  ASSERT_EQ(out.type(), CV_8UC3);
  ASSERT_EQ(out.size(), gray.size());
  EXPECT_EQ(out.at<cv::Vec3b>(10, 50), cv::Vec3b(0, 255, 255));  // on the top edge
  EXPECT_EQ(out.at<cv::Vec3b>(30, 90), cv::Vec3b(0, 255, 255));  // on the right edge
  EXPECT_EQ(out.at<cv::Vec3b>(30, 50), cv::Vec3b(200, 200, 200));  // inside: untouched
  EXPECT_EQ(gray.at<uint8_t>(10, 50), 200);                      // the input is not drawn on
  EXPECT_THROW(draw_det_result(cv::Mat(), quads), ValueError);
}

}  // namespace
}  // namespace skiff::ocr
