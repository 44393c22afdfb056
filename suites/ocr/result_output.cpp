#include "suites/ocr/result_output.h"

#include "suites/ocr/draw_result.h"

#include <algorithm>
#include <cmath>

namespace skiff::ocr {
namespace {

nlohmann::json quad_json(const Quad& q) {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : q.pts) pts.push_back({int(std::lround(p.x)), int(std::lround(p.y))});
  return pts;
}

}  // namespace

nlohmann::json result_json(const OcrResult& r) {
  nlohmann::json j;
  j["dt_polys"] = nlohmann::json::array();
  j["dt_scores"] = nlohmann::json::array();
  for (const auto& d : r.detections) {
    j["dt_polys"].push_back(quad_json(d.quad));
    j["dt_scores"].push_back(d.score);
  }
  // PaddleOCR 3.x reports the orientation class: 0 upright, 1 turned 180 degrees, -1 classifier off.
  j["textline_orientation_angles"] = nlohmann::json::array();
  for (int a : r.angles) j["textline_orientation_angles"].push_back(a < 0 ? -1 : a == 180 ? 1 : 0);
  j["rec_texts"] = nlohmann::json::array();
  j["rec_scores"] = nlohmann::json::array();
  j["rec_polys"] = nlohmann::json::array();
  j["rec_boxes"] = nlohmann::json::array();
  for (const auto& l : r.lines) {
    j["rec_texts"].push_back(l.text);
    j["rec_scores"].push_back(l.score);
    j["rec_polys"].push_back(quad_json(l.quad));
    float x0 = 1e30f, y0 = 1e30f, x1 = -1e30f, y1 = -1e30f;
    for (const auto& p : l.quad.pts) {
      x0 = std::min(x0, p.x), y0 = std::min(y0, p.y), x1 = std::max(x1, p.x), y1 = std::max(y1, p.y);
    }
    j["rec_boxes"].push_back({int(x0), int(y0), int(std::ceil(x1)), int(std::ceil(y1))});
  }
  j["timings_ms"] = {{"total", r.timings.total_ms}, {"det", r.timings.det_ms}, {"cls", r.timings.cls_ms},
                     {"rec", r.timings.rec_ms}, {"post", r.timings.post_ms}};
  return j;
}

cv::Mat draw_result_lines(const cv::Mat& image, const OcrResult& r) {
  std::vector<std::array<cv::Point2f, 4>> quads;
  std::vector<std::string> texts;
  std::vector<float> scores;
  for (const auto& l : r.lines) {
    quads.push_back(l.quad.pts);
    texts.push_back(l.text);
    scores.push_back(l.score);
  }
  return draw_ocr_result(to_bgr8(image), quads, texts, scores, 0.0f);
}

}  // namespace skiff::ocr
