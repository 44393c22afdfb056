// Tests of suites/ocr/db_postprocess.h on synthetic probability maps whose
// boxes can be worked out by hand (see each test for the arithmetic).
#include "suites/ocr/db_postprocess.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <vector>

#include "framework/core/error.h"

namespace skiff::ocr {
namespace {

// A map_h x map_w probability map, zero except the given filled rectangles.
struct ProbMap {
  ProbMap(int h, int w) : mat(h, w, CV_32FC1, cv::Scalar(0)) {}
  ProbMap& rect(int x0, int y0, int x1, int y1, float p) {  // inclusive corners
    mat(cv::Rect(x0, y0, x1 - x0 + 1, y1 - y0 + 1)).setTo(p);
    return *this;
  }
  std::vector<TextBox> run(int src_h, int src_w, const DbParams& p = {}) const {
    return db_postprocess(mat.ptr<float>(), mat.rows, mat.cols, src_h, src_w, p);
  }
  std::vector<TextBox> run(const DbParams& p = {}) const { return run(mat.rows, mat.cols, p); }
  cv::Mat mat;
};

void expect_quad(const Quad& q, float x0, float y0, float x1, float y1) {
  EXPECT_FLOAT_EQ(q.pts[0].x, x0);
  EXPECT_FLOAT_EQ(q.pts[0].y, y0);
  EXPECT_FLOAT_EQ(q.pts[1].x, x1);
  EXPECT_FLOAT_EQ(q.pts[1].y, y0);
  EXPECT_FLOAT_EQ(q.pts[2].x, x1);
  EXPECT_FLOAT_EQ(q.pts[2].y, y1);
  EXPECT_FLOAT_EQ(q.pts[3].x, x0);
  EXPECT_FLOAT_EQ(q.pts[3].y, y1);
}

TEST(DbPostprocessTest, UnclipDistanceOfKnownRectangle) {
  const std::vector<cv::Point2f> r = {{0, 0}, {10, 0}, {10, 4}, {0, 4}};
  EXPECT_DOUBLE_EQ(unclip_distance(r, 1.5), 40.0 * 1.5 / 28.0);
  // Orientation does not matter (area is absolute).
  const std::vector<cv::Point2f> ccw = {{0, 0}, {0, 4}, {10, 4}, {10, 0}};
  EXPECT_DOUBLE_EQ(unclip_distance(ccw, 2.0), 40.0 * 2.0 / 28.0);
  // Offsetting by 2.14 and rounding to Clipper's integer grid: x in [-2, 12], y in [-2, 6].
  const std::vector<cv::Point> grown = unclip(r, 1.5);
  ASSERT_FALSE(grown.empty());
  const cv::Rect bb = cv::boundingRect(grown);
  EXPECT_EQ(bb.x, -2);
  EXPECT_EQ(bb.y, -2);
  EXPECT_EQ(bb.x + bb.width - 1, 12);
  EXPECT_EQ(bb.y + bb.height - 1, 6);
}

TEST(DbPostprocessTest, RectangleBecomesUnclippedBox) {
  // Contour corners (30,20)-(129,39): 99 x 19, area 1881, perimeter 236,
  // distance = 1881 * 1.5 / 236 = 11.9555 -> edges at 18.04, 8.04, 140.96, 50.96,
  // rounded by Clipper to 18, 8, 141, 51.
  const auto boxes = ProbMap(100, 200).rect(30, 20, 129, 39, 0.9f).run();
  ASSERT_EQ(boxes.size(), 1u);
  expect_quad(boxes[0].quad, 18, 8, 141, 51);
  EXPECT_NEAR(boxes[0].score, 0.9f, 1e-6);
}

TEST(DbPostprocessTest, UnclipRatioChangesExpansion) {
  DbParams p;
  p.unclip_ratio = 2.0f;  // distance 15.94 -> 14.06, 4.06, 144.94, 54.94
  const auto boxes = ProbMap(100, 200).rect(30, 20, 129, 39, 0.9f).run(p);
  ASSERT_EQ(boxes.size(), 1u);
  expect_quad(boxes[0].quad, 14, 4, 145, 55);
}

TEST(DbPostprocessTest, ScalesToSourceSize) {
  // Same map, source twice as large: every coordinate doubles.
  const auto boxes = ProbMap(100, 200).rect(30, 20, 129, 39, 0.9f).run(200, 400);
  ASSERT_EQ(boxes.size(), 1u);
  expect_quad(boxes[0].quad, 36, 16, 282, 102);
  // Non-uniform: x * 3, y * 2.
  const auto stretched = ProbMap(100, 200).rect(30, 20, 129, 39, 0.9f).run(200, 600);
  ASSERT_EQ(stretched.size(), 1u);
  expect_quad(stretched[0].quad, 54, 16, 423, 102);
  // Shrunk: x * 0.2, y * 0.2: 3.6 -> 4, 1.6 -> 2, 28.2 -> 28, 10.2 -> 10.
  const auto shrunk = ProbMap(100, 200).rect(30, 20, 129, 39, 0.9f).run(20, 40);
  ASSERT_EQ(shrunk.size(), 1u);
  expect_quad(shrunk[0].quad, 4, 2, 28, 10);
}

TEST(DbPostprocessTest, ClipsToImageBounds) {
  // Top-left corner: contour (0,0)-(59,19), distance 1121 * 1.5 / 156 = 10.78,
  // box (-11,-11)-(70,30) clamped to 0.
  const auto tl = ProbMap(100, 200).rect(0, 0, 59, 19, 0.9f).run();
  ASSERT_EQ(tl.size(), 1u);
  expect_quad(tl[0].quad, 0, 0, 70, 30);
  // Bottom-right corner: contour (150,80)-(199,99), distance 931 * 1.5 / 136 = 10.27,
  // box (140,70)-(209,109) -> clamped to the map (200, 100) -> clipped to w-1, h-1.
  const auto br = ProbMap(100, 200).rect(150, 80, 199, 99, 0.9f).run();
  ASSERT_EQ(br.size(), 1u);
  expect_quad(br[0].quad, 140, 70, 199, 99);
}

TEST(DbPostprocessTest, BoxThresholdDropsWeakBoxes) {
  const ProbMap weak = ProbMap(100, 200).rect(30, 20, 129, 39, 0.5f);  // above thresh 0.3
  EXPECT_TRUE(weak.run().empty());                                      // 0.5 < box_thresh 0.6
  DbParams p;
  p.box_thresh = 0.45f;
  const auto kept = weak.run(p);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_NEAR(kept[0].score, 0.5f, 1e-6);
  // A map below the pixel threshold gives nothing at all.
  EXPECT_TRUE(ProbMap(100, 200).rect(30, 20, 129, 39, 0.29f).run().empty());
}

TEST(DbPostprocessTest, BoxThresholdComparesAsDecimal) {
  // score is exactly float 0.6f (0.60000002); PaddleOCR compares against the
  // Python float 0.6, so the box is kept.
  DbParams p;
  p.box_thresh = 0.6f;
  EXPECT_EQ(ProbMap(100, 200).rect(30, 20, 129, 39, 0.6f).run(p).size(), 1u);
  p.box_thresh = 0.61f;
  EXPECT_TRUE(ProbMap(100, 200).rect(30, 20, 129, 39, 0.6f).run(p).empty());
}

TEST(DbPostprocessTest, SmallBlobsAreDropped) {
  ProbMap m(100, 200);
  m.rect(10, 10, 11, 11, 0.9f);     // 2x2: short side 1 < min_size 3
  m.rect(50, 50, 149, 51, 0.9f);    // 2 rows: short side 1
  m.rect(10, 80, 12, 82, 0.9f);     // 3x3: short side 2
  EXPECT_TRUE(m.run().empty());
  m.rect(100, 5, 179, 24, 0.9f);    // a real text line
  const auto boxes = m.run();
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_GT(boxes[0].quad.pts[1].x, 170);
}

TEST(DbPostprocessTest, TinySourceBoxesAreFiltered) {
  // Scaled into a 5 x 10 source the box is (1,0)-(7,3) (round(0.9)=1, 0.4 -> 0,
  // round(7.05)=7, round(2.55)=3): height 3 <= 3 -> dropped.
  EXPECT_TRUE(ProbMap(100, 200).rect(30, 20, 129, 39, 0.9f).run(5, 10).empty());
  EXPECT_EQ(ProbMap(100, 200).rect(30, 20, 129, 39, 0.9f).run(20, 40).size(), 1u);
}

TEST(DbPostprocessTest, SlowScoreFollowsThePolygon) {
  // An L: its minimum-area box is mostly empty (fast score ~0.36), while the
  // contour polygon is all text (slow score ~0.9).
  ProbMap m(100, 200);
  m.rect(10, 10, 29, 49, 0.9f).rect(10, 40, 109, 49, 0.9f);
  EXPECT_TRUE(m.run().empty());
  DbParams slow;
  slow.score_mode = DbParams::Slow;
  const auto boxes = m.run(slow);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_GT(boxes[0].score, 0.85f);
  std::vector<cv::Point> contour = {{10, 10}, {10, 49}, {109, 49}, {109, 40}, {29, 40}, {29, 10}};
  EXPECT_GT(box_score_slow(m.mat, contour), 0.85);
  const Quad bbox{{cv::Point2f(10, 10), cv::Point2f(109, 10), cv::Point2f(109, 49), cv::Point2f(10, 49)}};
  EXPECT_LT(box_score_fast(m.mat, bbox), 0.5);
}

TEST(DbPostprocessTest, DilationJoinsOnePixelGaps) {
  ProbMap m(100, 200);
  m.rect(30, 20, 79, 39, 0.9f).rect(81, 20, 129, 39, 0.9f);
  EXPECT_EQ(m.run().size(), 2u);
  DbParams p;
  p.use_dilation = true;
  const auto joined = m.run(p);
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_LT(joined[0].quad.pts[0].x, 30);
  EXPECT_GT(joined[0].quad.pts[1].x, 129);
}

TEST(DbPostprocessTest, MaxCandidatesLimitsContours) {
  ProbMap m(100, 200);
  m.rect(10, 10, 59, 29, 0.9f).rect(100, 10, 159, 29, 0.9f).rect(10, 60, 59, 79, 0.9f);
  EXPECT_EQ(m.run().size(), 3u);
  DbParams p;
  p.max_candidates = 1;
  EXPECT_EQ(m.run(p).size(), 1u);
}

TEST(DbPostprocessTest, RotatedRegionGivesClockwiseQuad) {
  cv::Mat prob(200, 200, CV_32FC1, cv::Scalar(0));
  const cv::RotatedRect r(cv::Point2f(100, 100), cv::Size2f(120, 24), -20);
  cv::Point2f c[4];
  r.points(c);
  std::vector<cv::Point> poly;
  for (const auto& p : c) poly.emplace_back(cvRound(p.x), cvRound(p.y));
  cv::fillPoly(prob, std::vector<std::vector<cv::Point>>{poly}, cv::Scalar(0.95));
  const auto boxes = db_postprocess(prob.ptr<float>(), 200, 200, 200, 200, {});
  ASSERT_EQ(boxes.size(), 1u);
  const Quad& q = boxes[0].quad;
  // Clockwise from top-left; the text rises to the right (angle -20 degrees).
  EXPECT_LT(q.pts[0].x, q.pts[1].x);
  EXPECT_GT(q.pts[0].y, q.pts[1].y);
  EXPECT_LT(q.pts[1].y, q.pts[2].y);
  EXPECT_GT(q.pts[2].x, q.pts[3].x);
  const float w = edge_length(q.pts[0], q.pts[1]), h = edge_length(q.pts[0], q.pts[3]);
  // The box grows by the unclip distance on every side: compare with the
  // minimum-area box of the region's own contour.
  cv::Mat bitmap;
  cv::compare(prob, 0.3, bitmap, cv::CMP_GT);
  std::vector<std::vector<cv::Point>> contours;
  cv::findContours(bitmap, contours, cv::RETR_LIST, cv::CHAIN_APPROX_SIMPLE);
  ASSERT_EQ(contours.size(), 1u);
  const MiniBox inner = min_area_box(contours[0]);
  const double d = unclip_distance(inner.quad.pts, 1.5);
  const double long_side = edge_length(inner.quad.pts[0], inner.quad.pts[1]);
  EXPECT_NEAR(inner.short_side, 25, 2);  // ~24 px plus the rasterised boundary
  EXPECT_NEAR(w, long_side + 2 * d, 1.5);
  EXPECT_NEAR(h, inner.short_side + 2 * d, 1.5);
  for (const auto& p : q.pts) EXPECT_EQ(p.x, std::trunc(p.x));  // integer corners
}

TEST(DbPostprocessTest, RejectsBadArguments) {
  std::vector<float> prob(100, 0.0f);
  EXPECT_THROW(db_postprocess(nullptr, 10, 10, 10, 10, {}), ValueError);
  EXPECT_THROW(db_postprocess(prob.data(), 0, 10, 10, 10, {}), ValueError);
  EXPECT_THROW(db_postprocess(prob.data(), 10, 10, 10, -1, {}), ValueError);
  DbParams p;
  p.unclip_ratio = 0.0f;
  EXPECT_THROW(db_postprocess(prob.data(), 10, 10, 10, 10, p), ValueError);
  p = {};
  p.box_thresh = 1.5f;
  EXPECT_THROW(db_postprocess(prob.data(), 10, 10, 10, 10, p), ValueError);
  EXPECT_TRUE(db_postprocess(prob.data(), 10, 10, 10, 10, {}).empty());
}

}  // namespace
}  // namespace skiff::ocr
