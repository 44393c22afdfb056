// Side-by-side visualisation of OCR results (PaddleOCR draw_ocr_box_txt style).
#include "suites/ocr/draw_result.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "suites/ocr/font.h"

namespace skiff::ocr {
namespace {

// A saturated colour picked by hashing the box index (golden-ratio hue steps
// keep neighbouring boxes apart).
cv::Scalar box_colour(size_t i) {
  const double hue = std::fmod(static_cast<double>(i) * 0.618033988749895 + 0.13, 1.0) * 180.0;
  cv::Mat hsv(1, 1, CV_8UC3, cv::Scalar(hue, 200 + 13 * (i % 4), 180 + 19 * (i % 3))), bgr;
  cv::cvtColor(hsv, bgr, cv::COLOR_HSV2BGR);
  const cv::Vec3b c = bgr.at<cv::Vec3b>(0, 0);
  return {static_cast<double>(c[0]), static_cast<double>(c[1]), static_cast<double>(c[2])};
}

// Renders `text` into a coverage patch of size w x h, as large as fits.
cv::Mat text_patch(const Font& font, const std::string& text, int w, int h) {
  cv::Mat patch = cv::Mat::zeros(h, w, CV_8UC1);
  const std::vector<std::string> chars = split_utf8(text);
  const bool vertical = h > 1.5 * w && chars.size() > 1;
  if (vertical) {
    const int cell = h / static_cast<int>(chars.size());
    const int px = std::clamp(static_cast<int>(std::min(w * 0.85, cell * 0.85)), 4, 1024);
    for (size_t i = 0; i < chars.size(); ++i) {
      cv::Mat m = font.render_mask(chars[i], px);
      if (m.empty()) continue;
      if (m.cols > w || m.rows > cell) {
        const double s =
            std::min(static_cast<double>(w) / m.cols, static_cast<double>(cell) / m.rows);
        cv::resize(m, m, {}, s, s, cv::INTER_AREA);
      }
      const cv::Point at((w - m.cols) / 2, static_cast<int>(i) * cell + (cell - m.rows) / 2);
      m.copyTo(patch(cv::Rect(at, m.size())));
    }
    return patch;
  }
  // The ink of a line is about 0.9 em high; start there and shrink to fit.
  int px = std::clamp(static_cast<int>(h * 0.8), 4, 1024);
  cv::Mat m = font.render_mask(text, px);
  if (m.empty()) return patch;
  const double s = std::min({1.0, 0.95 * w / m.cols, 0.9 * h / m.rows});
  if (s < 1.0) {
    px = std::clamp(static_cast<int>(px * s), 4, 1024);
    m = font.render_mask(text, px);
    if (m.cols > w || m.rows > h) {  // tiny boxes: scale the mask itself
      const double t = std::min(static_cast<double>(w) / m.cols, static_cast<double>(h) / m.rows);
      cv::resize(m, m, {}, t, t, cv::INTER_AREA);
    }
  }
  const int x = std::max(0, (w - m.cols) / 2), y = std::max(0, (h - m.rows) / 2);
  const cv::Rect r = cv::Rect(x, y, m.cols, m.rows) & cv::Rect(0, 0, w, h);
  m(cv::Rect(0, 0, r.width, r.height)).copyTo(patch(r));
  return patch;
}

}  // namespace

cv::Mat draw_ocr_result(const cv::Mat& image, const std::vector<std::array<cv::Point2f, 4>>& quads,
                        const std::vector<std::string>& texts, const std::vector<float>& scores,
                        float drop_score) {
  SKIFF_CHECK(!image.empty(), "draw_ocr_result: expected a non-empty image");
  SKIFF_CHECK(image.type() == CV_8UC3 || image.type() == CV_8UC1 || image.type() == CV_8UC4,
              "draw_ocr_result: expected a CV_8UC1/3/4 image, got type {}", image.type());
  SKIFF_CHECK(texts.size() == quads.size(),
              "draw_ocr_result: expected one text per box, got {} boxes and {} texts", quads.size(),
              texts.size());
  SKIFF_CHECK(scores.empty() || scores.size() == quads.size(),
              "draw_ocr_result: expected no scores or one per box, got {} boxes and {} scores",
              quads.size(), scores.size());
  cv::Mat bgr;
  if (image.type() == CV_8UC1)
    cv::cvtColor(image, bgr, cv::COLOR_GRAY2BGR);
  else if (image.type() == CV_8UC4)
    cv::cvtColor(image, bgr, cv::COLOR_BGRA2BGR);
  else
    bgr = image;

  const Font& font = Font::cjk();
  cv::Mat fills = bgr.clone();
  cv::Mat right(bgr.size(), CV_8UC3, cv::Scalar::all(255));
  std::vector<std::vector<cv::Point>> outlines;
  std::vector<cv::Scalar> colours;
  for (size_t i = 0; i < quads.size(); ++i) {
    if (!scores.empty() && !(scores[i] >= drop_score)) continue;
    const auto& q = quads[i];
    std::vector<cv::Point> poly;
    for (const cv::Point2f& p : q) poly.emplace_back(cvRound(p.x), cvRound(p.y));
    const cv::Scalar colour = box_colour(i);
    cv::fillPoly(fills, std::vector{poly}, colour);
    outlines.push_back(poly);
    colours.push_back(colour);

    const double w = std::max(cv::norm(q[0] - q[1]), cv::norm(q[3] - q[2]));
    const double h = std::max(cv::norm(q[0] - q[3]), cv::norm(q[1] - q[2]));
    const int pw = std::max(1, cvRound(w)), ph = std::max(1, cvRound(h));
    if (texts[i].empty() || pw < 2 || ph < 2) continue;
    const cv::Mat patch = text_patch(font, texts[i], pw, ph);
    const cv::Point2f src[4] = {{0, 0},
                                {static_cast<float>(pw), 0},
                                {static_cast<float>(pw), static_cast<float>(ph)},
                                {0, static_cast<float>(ph)}};
    cv::Mat warped;
    cv::warpPerspective(patch, warped, cv::getPerspectiveTransform(src, q.data()), right.size(),
                        cv::INTER_LINEAR, cv::BORDER_CONSTANT, 0);
    blend_mask(right, warped, {0, 0}, cv::Scalar::all(0));
  }
  cv::Mat left;
  cv::addWeighted(bgr, 0.5, fills, 0.5, 0, left);
  for (size_t i = 0; i < outlines.size(); ++i) {
    cv::polylines(left, std::vector{outlines[i]}, true, colours[i], 2, cv::LINE_AA);
    cv::polylines(right, std::vector{outlines[i]}, true, colours[i], 2, cv::LINE_AA);
  }
  cv::Mat out;
  cv::hconcat(left, right, out);
  return out;
}

cv::Mat draw_det_result(const cv::Mat& image, const std::vector<std::array<cv::Point2f, 4>>& quads) {
  SKIFF_CHECK(!image.empty(), "draw_det_result: expected a non-empty image");
  SKIFF_CHECK(image.type() == CV_8UC3 || image.type() == CV_8UC1 || image.type() == CV_8UC4,
              "draw_det_result: expected a CV_8UC1/3/4 image, got type {}", image.type());
  cv::Mat out;
  if (image.type() == CV_8UC1)
    cv::cvtColor(image, out, cv::COLOR_GRAY2BGR);
  else if (image.type() == CV_8UC4)
    cv::cvtColor(image, out, cv::COLOR_BGRA2BGR);
  else
    out = image.clone();
  std::vector<std::vector<cv::Point>> outlines;
  for (const auto& q : quads) {
    std::vector<cv::Point> pts;
    for (const auto& p : q) pts.emplace_back(int(std::lround(p.x)), int(std::lround(p.y)));
    outlines.push_back(std::move(pts));
  }
  cv::polylines(out, outlines, true, cv::Scalar(0, 255, 255), 2);
  return out;
}

}  // namespace skiff::ocr
