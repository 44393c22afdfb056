// PP-OCR pre/post-processing rules where two ports (skiff's C++ and the
// project's JavaScript reference in tests/tools/ort) could share one misreading.
// Every expected value here is worked out by hand from PaddleOCR's published
// definitions, not from either port:
//   - DBPostProcess (ppocr/postprocess/db_postprocess.py): boxes_from_bitmap,
//     get_mini_boxes, box_score_fast / box_score_slow, unclip;
//   - TextDetector.filter_tag_det_res (tools/infer/predict_det.py);
//   - DetResizeForTest.resize_image_type0 (ppocr/data/imaug/operators.py);
//   - sorted_boxes (tools/infer/predict_system.py);
//   - CTCLabelDecode.decode (ppocr/postprocess/rec_postprocess.py).
// The arithmetic is in the comment next to each expectation.
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <vector>

#include "suites/ocr/box_order.h"
#include "suites/ocr/ctc_decode.h"
#include "suites/ocr/db_postprocess.h"
#include "suites/ocr/preprocess.h"

namespace skiff::ocr {
namespace {

cv::Mat prob_map(int h, int w) { return cv::Mat(h, w, CV_32FC1, cv::Scalar(0)); }
void fill(cv::Mat& m, int x0, int y0, int x1, int y1, float p) {  // inclusive corners
  m(cv::Rect(x0, y0, x1 - x0 + 1, y1 - y0 + 1)).setTo(p);
}
std::vector<TextBox> run_db(const cv::Mat& m, int src_h, int src_w, const DbParams& p = {}) {
  return db_postprocess(m.ptr<float>(), m.rows, m.cols, src_h, src_w, p);
}
void expect_rect(const Quad& q, float x0, float y0, float x1, float y1) {
  const cv::Point2f want[4] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(q.pts[i].x, want[i].x) << "corner " << i;
    EXPECT_FLOAT_EQ(q.pts[i].y, want[i].y) << "corner " << i;
  }
}

// ---------------------------------------------------------------------------
// unclip: distance = Polygon(box).area * unclip_ratio / Polygon(box).length on
// the float box, while pyclipper receives the points truncated to integers.

TEST(PaddleRules, UnclipDistanceUsesTheFloatBoxAndClipperTheTruncatedOne) {
  // Box 10.9 x 4.9 at the origin: area 53.41, perimeter 31.6,
  // distance = 53.41 * 1.5 / 31.6 = 80.115 / 31.6 = 2.535285.
  const std::vector<cv::Point2f> box = {{0, 0}, {10.9f, 0}, {10.9f, 4.9f}, {0, 4.9f}};
  EXPECT_NEAR(unclip_distance(box, 1.5), 80.115 / 31.6, 1e-5);
  // Clipper offsets the truncated box (0,0)-(10,4) by 2.535285 and rounds each
  // vertex half away from zero: x -2.535 -> -3, 12.535 -> 13; y -2.535 -> -3,
  // 6.535 -> 7. (The distance of the truncated box, 40 * 1.5 / 28 = 2.142857,
  // would give -2..12 x -2..6; rounding the corners to (11, 5) instead of
  // truncating would give -3..14 x -3..8.)
  const std::vector<cv::Point> grown = unclip(box, 1.5);
  ASSERT_FALSE(grown.empty());
  const cv::Rect bb = cv::boundingRect(grown);
  EXPECT_EQ(bb.x, -3);
  EXPECT_EQ(bb.y, -3);
  EXPECT_EQ(bb.x + bb.width - 1, 13);
  EXPECT_EQ(bb.y + bb.height - 1, 7);
}

// ---------------------------------------------------------------------------
// min_size: `sside < self.min_size` (3) before unclip, `sside < self.min_size + 2`
// after it, sside = min(cv2.minAreaRect(...)[1]).

TEST(PaddleRules, MinSizeIsStrictBeforeUnclip) {
  // A blob 4 px tall: contour y 40..43, minAreaRect 99 x 3, sside 3 is not < 3.
  // Unclip: area 297, perimeter 2 * (99 + 3) = 204, d = 297 * 1.5 / 204 = 2.1838:
  // x 50 - 2.18 -> 48, 149 + 2.18 -> 151, y 40 - 2.18 -> 38, 43 + 2.18 -> 45.
  cv::Mat m = prob_map(100, 200);
  fill(m, 50, 40, 149, 43, 0.9f);
  auto boxes = run_db(m, 100, 200);
  ASSERT_EQ(boxes.size(), 1u);
  expect_rect(boxes[0].quad, 48, 38, 151, 45);
  // 3 px tall: contour height 2 < 3, dropped before scoring.
  cv::Mat thin = prob_map(100, 200);
  fill(thin, 50, 40, 149, 42, 0.9f);
  EXPECT_TRUE(run_db(thin, 100, 200).empty());
}

TEST(PaddleRules, TheUnclippedBoxNeedsMinSizePlusTwo) {
  // A blob 5 px tall: contour x 50..149, y 40..44, minAreaRect 99 x 4 (sside 4 >= 3).
  // unclip_ratio 0.2: area 396, perimeter 2 * (99 + 4) = 206, d = 396 * 0.2 / 206 = 0.38447;
  // the offsets round back onto the contour (39.62 -> 40, 44.38 -> 44, 49.62 -> 50,
  // 149.38 -> 149): the unclipped box is 99 x 4 and 4 < 3 + 2, dropped. (Its height in
  // the image would be 4 > 3, so filter_tag_det_res alone would keep it: only the
  // +2 rule drops it.)
  cv::Mat m = prob_map(100, 200);
  fill(m, 50, 40, 149, 44, 0.9f);
  DbParams p;
  p.unclip_ratio = 0.2f;
  EXPECT_TRUE(run_db(m, 100, 200, p).empty());
  // unclip_ratio 1.0: d = 396 / 206 = 1.92233: y 38.08 -> 38, 45.92 -> 46, x 48.08 -> 48,
  // 150.92 -> 151: short side 8, kept.
  p.unclip_ratio = 1.0f;
  auto boxes = run_db(m, 100, 200, p);
  ASSERT_EQ(boxes.size(), 1u);
  expect_rect(boxes[0].quad, 48, 38, 151, 46);
  // The 4 px tall blob of MinSizeIsStrictBeforeUnclip with unclip_ratio 0.3: d = 297 * 0.3 /
  // 204 = 0.43676 rounds back onto its 99 x 3 contour: 3 < 5, dropped.
  cv::Mat thin = prob_map(100, 200);
  fill(thin, 50, 40, 149, 43, 0.9f);
  p.unclip_ratio = 0.3f;
  EXPECT_TRUE(run_db(thin, 100, 200, p).empty());
}

// ---------------------------------------------------------------------------
// Scaling: np.round(x / width * dest_width) rounds half to even, then
// filter_tag_det_res drops boxes whose rect_width or rect_height is <= 3.

TEST(PaddleRules, ScalingRoundsHalfToEven) {
  // Contour (30,20)-(129,39): 99 x 19, area 1881, perimeter 236,
  // d = 1881 * 1.5 / 236 = 11.9555 -> box (18, 8)-(141, 51) on the 100 x 200 map.
  // Into a 50 x 100 source (x and y halved): 18 -> 9, 141 -> 70.5 -> 70 (even, not 71),
  // 8 -> 4, 51 -> 25.5 -> 26 (even).
  cv::Mat m = prob_map(100, 200);
  fill(m, 30, 20, 129, 39, 0.9f);
  auto boxes = run_db(m, 50, 100);
  ASSERT_EQ(boxes.size(), 1u);
  expect_rect(boxes[0].quad, 9, 4, 70, 26);
}

TEST(PaddleRules, BoxesOfFourPixelsSurviveTheTagFilter) {
  // The same box into a 10 x 20 source: x 18 * 0.1 = 1.8 -> 2, 141 * 0.1 = 14.1 -> 14;
  // y 8 * 0.1 = 0.8 -> 1, 51 * 0.1 = 5.1 -> 5: height 4 > 3, kept.
  cv::Mat m = prob_map(100, 200);
  fill(m, 30, 20, 129, 39, 0.9f);
  auto boxes = run_db(m, 10, 20);
  ASSERT_EQ(boxes.size(), 1u);
  expect_rect(boxes[0].quad, 2, 1, 14, 5);
  // 5 x 10: y 8 * 0.05 = 0.4 -> 0, 51 * 0.05 = 2.55 -> 3: height 3 <= 3, dropped.
  EXPECT_TRUE(run_db(m, 5, 10).empty());
}

// ---------------------------------------------------------------------------
// Box score: fast = mean over the min-area box polygon (corners shifted by the
// floored minimum and truncated with astype(int32)) within its bounding rect;
// slow = mean over the contour polygon.

TEST(PaddleRules, FastScoreTruncatesTheShiftedCorners) {
  // Box (10.6, 20.4)-(50.9, 30.7): xmin = floor(10.6) = 10, xmax = ceil(50.9) = 51,
  // ymin = 20, ymax = ceil(30.7) = 31. Shifted corners (0.6, 0.4)..(40.9, 10.7) truncate
  // to (0, 0)..(40, 10): the mask is x 10..50, y 20..30 (41 x 11 = 451 pixels), all 0.5.
  // Column 51 and row 31 are in the window but not in the mask (value 1.0): mean 0.5.
  // (Rounding the shifted corners, to (1, 0)..(41, 11), would put column 51 and row 31 in.)
  cv::Mat m = prob_map(60, 80);
  fill(m, 10, 20, 51, 31, 1.0f);
  fill(m, 10, 20, 50, 30, 0.5f);
  const Quad q{{cv::Point2f(10.6f, 20.4f), cv::Point2f(50.9f, 20.4f), cv::Point2f(50.9f, 30.7f),
                cv::Point2f(10.6f, 30.7f)}};
  EXPECT_NEAR(box_score_fast(m, q), 0.5, 1e-9);
}

TEST(PaddleRules, ScoreModesOnAnL) {
  // An L of 0.9: x 10..29, y 10..49 (800 px) plus x 10..109, y 40..49 (1000 px),
  // 200 px shared: 1600 px. Its min-area box is the bounding rectangle
  // (10,10)-(109,49), 100 x 40 = 4000 px: fast score 1600 * 0.9 / 4000 = 0.36.
  // The contour polygon covers exactly the 1600 px: slow score 0.9.
  cv::Mat m = prob_map(100, 200);
  fill(m, 10, 10, 29, 49, 0.9f);
  fill(m, 10, 40, 109, 49, 0.9f);
  const Quad bbox{{cv::Point2f(10, 10), cv::Point2f(109, 10), cv::Point2f(109, 49), cv::Point2f(10, 49)}};
  EXPECT_NEAR(box_score_fast(m, bbox), 0.36, 1e-6);
  const std::vector<cv::Point> contour = {{10, 10}, {10, 49}, {109, 49}, {109, 40}, {29, 40}, {29, 10}};
  EXPECT_NEAR(box_score_slow(m, contour), 0.9, 1e-6);
  // box_thresh 0.35: both keep it, each with its own score; 0.4: only slow.
  DbParams p;
  p.box_thresh = 0.35f;
  auto fast = run_db(m, 100, 200, p);
  ASSERT_EQ(fast.size(), 1u);
  EXPECT_NEAR(fast[0].score, 0.36, 1e-6);
  p.score_mode = DbParams::Slow;
  auto slow = run_db(m, 100, 200, p);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_NEAR(slow[0].score, 0.9, 1e-6);
  p.box_thresh = 0.4f;
  EXPECT_EQ(run_db(m, 100, 200, p).size(), 1u);
  p.score_mode = DbParams::Fast;
  EXPECT_TRUE(run_db(m, 100, 200, p).empty());
}

TEST(PaddleRules, SlowScoreCountsTheContourBoundary) {
  // Triangle (0,0), (4,0), (0,4) on prob(x, y) = x / 10: fillPoly takes the pixels
  // with x + y <= 4, rows of 5, 4, 3, 2, 1 = 15 pixels; the x's sum to
  // (0+1+2+3+4) + (0+1+2+3) + (0+1+2) + (0+1) + 0 = 20, so the mean is 2.0 / 15.
  cv::Mat m = prob_map(8, 8);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) m.at<float>(y, x) = float(x) / 10.0f;
  const std::vector<cv::Point> tri = {{0, 0}, {4, 0}, {0, 4}};
  EXPECT_NEAR(box_score_slow(m, tri), 2.0 / 15.0, 1e-7);
}

// ---------------------------------------------------------------------------
// DetResizeForTest (resize_image_type0): resize_h = int(h * ratio), then
// int(round(resize_h / 32) * 32) with Python's round (half to even), at least 32.

TEST(PaddleRules, ResizeTruncatesBeforeRoundingToMultiplesOf32) {
  // limit_type max, 960: 551 x 1000 -> ratio 960 / 1000 = 0.96 (the longer side is w).
  // h: int(551 * 0.96) = int(528.96) = 528; 528 / 32 = 16.5 -> 16 (even) -> 512.
  // (Rounding 528.96 / 32 = 16.53 without the int() would give 544, and half-up 544.)
  // w: int(1000 * 0.96) = 960 -> 30 -> 960.
  const DetInputInfo i = det_input_info(551, 1000);
  EXPECT_EQ(i.resized_h, 512);
  EXPECT_EQ(i.resized_w, 960);
  // ratio_h = resize_h / h = 512 / 551, ratio_w = 960 / 1000.
  EXPECT_NEAR(i.ratio_h, 512.0 / 551.0, 1e-6);
  EXPECT_NEAR(i.ratio_w, 0.96, 1e-6);
}

TEST(PaddleRules, MinLimitTypeScalesByTheShorterSideAndRoundsHalfToEven) {
  // limit_type min, 112: 100 x 300, min 100 < 112, h < w -> ratio 112 / 100 = 1.12.
  // h: int(100 * 1.12) = 112 -> 3.5 -> 4 (even) -> 128; w: int(300 * 1.12) = 336 -> 10.5
  // -> 10 (even) -> 320 (half-up would give 352).
  DetPreprocessParams p;
  p.limit_type = LimitType::Min;
  p.limit_side_len = 112;
  const DetInputInfo i = det_input_info(100, 300, p);
  EXPECT_EQ(i.resized_h, 128);
  EXPECT_EQ(i.resized_w, 320);
  // h == w takes the else branch (ratio from w): 50 x 50 with 112 -> ratio 2.24,
  // int(112.00000000000001) = 112 -> 3.5 -> 4 -> 128 on both sides.
  const DetInputInfo sq = det_input_info(50, 50, p);
  EXPECT_EQ(sq.resized_h, 128);
  EXPECT_EQ(sq.resized_w, 128);
  // Max type, longer side exactly the limit: not resized (max(h, w) > limit is false);
  // 960 / 32 = 30, 200 / 32 = 6.25 -> 6 -> 192.
  const DetInputInfo eq = det_input_info(200, 960);
  EXPECT_EQ(eq.resized_h, 192);
  EXPECT_EQ(eq.resized_w, 960);
  // limit_side_len 160 (the det recipe test's): 192 x 256 -> ratio 160 / 256 = 0.625,
  // h int(120.0) = 120 -> 3.75 -> 4 -> 128, w 160 -> 5 -> 160.
  DetPreprocessParams small;
  small.limit_side_len = 160;
  const DetInputInfo s = det_input_info(192, 256, small);
  EXPECT_EQ(s.resized_h, 128);
  EXPECT_EQ(s.resized_w, 160);
}

// ---------------------------------------------------------------------------
// sorted_boxes: sort by (y, x) of the first corner, then for i in 0..n-2 walk j = i
// down to 0 swapping j and j+1 while |y[j+1] - y[j]| < 10 and x[j+1] < x[j] (strict).

TextBox box_at(float x, float y, float score) {
  return TextBox{Quad{{cv::Point2f(x, y), cv::Point2f(x + 30, y), cv::Point2f(x + 30, y + 20), cv::Point2f(x, y + 20)}},
                 score};
}

TEST(PaddleRules, ReadingOrderTies) {
  // Input (100,0) a, (100,5) b, (50,5) c, (50,0) d.
  // Sorted by (y, x): d(50,0) a(100,0) c(50,5) b(100,5).
  // i=0: a vs d: 100 < 50? no. i=1: c vs a: dy 5, 50 < 100 -> swap: d c a b; c vs d:
  // 50 < 50? no (equal x never swaps). i=2: b vs a: 100 < 100? no.
  // Result d c a b: equal x on one line keeps the upper box first.
  std::vector<TextBox> boxes = {box_at(100, 0, 0.1f), box_at(100, 5, 0.2f), box_at(50, 5, 0.3f), box_at(50, 0, 0.4f)};
  sort_reading_order(boxes);
  std::vector<float> order;
  for (const auto& b : boxes) order.push_back(b.score);
  EXPECT_EQ(order, (std::vector<float>{0.4f, 0.3f, 0.1f, 0.2f}));

  // Same y, same x: the sort is stable (input order). (7, 3) e, (7, 3) f, (0, 12.5) g:
  // sorted e f g; g vs f: dy 9.5 < 10 and 0 < 7 -> swap: e g f; g vs e: dy 9.5, swap: g e f.
  std::vector<TextBox> ties = {box_at(7, 3, 0.5f), box_at(7, 3, 0.6f), box_at(0, 12.5f, 0.7f)};
  sort_reading_order(ties);
  order.clear();
  for (const auto& b : ties) order.push_back(b.score);
  EXPECT_EQ(order, (std::vector<float>{0.7f, 0.5f, 0.6f}));
}

// ---------------------------------------------------------------------------
// CTCLabelDecode.decode with is_remove_duplicate: keep step t when its argmax
// differs from step t-1's (blank included) and is not the blank; the score is
// np.mean of the kept steps' max probabilities.

TEST(PaddleRules, CtcKeepsTheFirstStepOfEachRunAndSpacesCount) {
  // Classes: 0 blank, 1 'a', 2 'b', 3 ' ' (use_space_char).
  // argmax    ' '  ' '  a    _    _    a    a    ' '  _    ' '
  // p         .9   .5   .8   .99  .99  .7   .95  .6   .9   .4
  // kept      x         x              x         x         x
  // The blanks separate the two runs of a, so both are kept; the two spaces at the end
  // are separated by a blank too: " aa  ", score (0.9 + 0.8 + 0.7 + 0.6 + 0.4) / 5 = 0.68.
  const Charset cs({"a", "b"});
  const std::vector<int> best = {3, 3, 1, 0, 0, 1, 1, 3, 0, 3};
  const std::vector<float> p = {0.9f, 0.5f, 0.8f, 0.99f, 0.99f, 0.7f, 0.95f, 0.6f, 0.9f, 0.4f};
  std::vector<float> probs;
  for (size_t t = 0; t < best.size(); ++t)
    for (int c = 0; c < 4; ++c) probs.push_back(c == best[t] ? p[t] : (1.0f - p[t]) / 3.0f);
  const DecodedText d = ctc_greedy_decode(probs.data(), int(best.size()), 4, cs);
  EXPECT_EQ(d.text, " aa  ");
  EXPECT_NEAR(d.score, 0.68, 1e-6);
}

}  // namespace
}  // namespace skiff::ocr
