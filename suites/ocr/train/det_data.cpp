#include "suites/ocr/train/det_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <polyclipping/clipper.hpp>

#include "framework/core/error.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/train/label_file.h"

namespace skiff::ocr {

namespace fs = std::filesystem;

std::vector<DetSample> read_det_labels(const std::vector<std::string>& label_files, const std::string& data_dir) {
  std::vector<DetSample> out;
  read_label_lines(label_files, data_dir, "image_path<TAB>[{\"transcription\": ..., \"points\": [[x, y], ...]}]",
                   [&](const LabelLine& l) {
    DetSample sample{l.image, {}};
    nlohmann::json regions = nlohmann::json::parse(l.label, nullptr, false);
    if (regions.is_discarded() || !regions.is_array())
      throw ValueError(fmt::format("{}:{}: the label after the tab is not a JSON list", l.file, l.line));
    for (size_t i = 0; i < regions.size(); ++i) {
      const auto& r = regions[i];
      auto bad = [&](const char* what) { return ValueError(fmt::format("{}:{}: region {}: {}", l.file, l.line, i, what)); };
      if (!r.is_object() || !r.contains("points") || !r["points"].is_array())
        throw bad("expected {\"transcription\": ..., \"points\": [[x, y], ...]}");
      DetPolygon poly;
      if (r.contains("transcription") && r["transcription"].is_string()) poly.text = r["transcription"];
      poly.ignore = poly.text == "###";
      for (const auto& p : r["points"]) {
        if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) throw bad("a point is not [x, y]");
        poly.points.emplace_back(p[0].get<float>(), p[1].get<float>());
      }
      if (poly.points.size() < 3) throw bad("a region needs at least 3 points");
      sample.polygons.push_back(std::move(poly));
    }
    out.push_back(std::move(sample));
  });
  return out;
}

// ---- targets ---------------------------------------------------------------------------------

namespace {

double polygon_area(const std::vector<cv::Point2f>& p) { return std::abs(cv::contourArea(p)); }

double polygon_perimeter(const std::vector<cv::Point2f>& p) { return cv::arcLength(p, true); }

// Clipper works in integers: coordinates are scaled so offsets keep sub-pixel precision.
constexpr double kClipperScale = 16.0;

std::vector<cv::Point> rounded(const std::vector<cv::Point2f>& p) {
  std::vector<cv::Point> out;
  for (const auto& q : p) out.emplace_back(int(std::lround(q.x)), int(std::lround(q.y)));
  return out;
}

double segment_distance(cv::Point2f p, cv::Point2f a, cv::Point2f b) {
  cv::Point2f ab = b - a, ap = p - a;
  double len2 = ab.dot(ab);
  double t = len2 > 0 ? std::clamp(double(ap.dot(ab)) / len2, 0.0, 1.0) : 0.0;
  cv::Point2f closest = a + float(t) * ab;
  return std::hypot(double(p.x - closest.x), double(p.y - closest.y));
}

// Raises `canvas` to 1 - distance / offset over the grown polygon's bounding box.
void draw_border(cv::Mat& canvas, const std::vector<cv::Point2f>& poly, const std::vector<cv::Point>& grown,
                 double offset) {
  cv::Rect box = cv::boundingRect(grown) & cv::Rect(0, 0, canvas.cols, canvas.rows);
  for (int y = box.y; y < box.y + box.height; ++y) {
    auto* row = canvas.ptr<float>(y);
    for (int x = box.x; x < box.x + box.width; ++x) {
      double d = 1e30;
      for (size_t i = 0; i < poly.size(); ++i)
        d = std::min(d, segment_distance({float(x), float(y)}, poly[i], poly[(i + 1) % poly.size()]));
      float v = float(1.0 - std::clamp(d / offset, 0.0, 1.0));
      row[x] = std::max(row[x], v);
    }
  }
}

}  // namespace

double db_offset(const std::vector<cv::Point2f>& polygon, double shrink_ratio) {
  double perimeter = polygon_perimeter(polygon);
  if (perimeter <= 0) return 0;
  return polygon_area(polygon) * (1 - shrink_ratio * shrink_ratio) / perimeter;
}

std::vector<std::vector<cv::Point>> offset_polygon(const std::vector<cv::Point2f>& polygon, double distance) {
  ClipperLib::Path path;
  for (const auto& p : polygon)
    path.emplace_back(ClipperLib::cInt(std::llround(p.x * kClipperScale)), ClipperLib::cInt(std::llround(p.y * kClipperScale)));
  ClipperLib::ClipperOffset offset;
  offset.AddPath(path, ClipperLib::jtRound, ClipperLib::etClosedPolygon);
  ClipperLib::Paths result;
  offset.Execute(result, distance * kClipperScale);
  std::vector<std::vector<cv::Point>> out;
  for (const auto& r : result) {
    std::vector<cv::Point> pts;
    for (const auto& p : r) pts.emplace_back(int(std::lround(double(p.X) / kClipperScale)), int(std::lround(double(p.Y) / kClipperScale)));
    if (pts.size() >= 3) out.push_back(std::move(pts));
  }
  return out;
}

DetTargets make_det_targets(const std::vector<DetPolygon>& polygons, int rows, int cols, const DetTargetOptions& o) {
  SKIFF_CHECK(rows > 0 && cols > 0, "det targets need a positive size, got {}x{}", rows, cols);
  SKIFF_CHECK(o.shrink_ratio > 0 && o.shrink_ratio < 1, "shrink_ratio must be in (0, 1), got {}", o.shrink_ratio);
  DetTargets t{cv::Mat::zeros(rows, cols, CV_32F), cv::Mat::ones(rows, cols, CV_32F), cv::Mat::zeros(rows, cols, CV_32F),
               cv::Mat::zeros(rows, cols, CV_32F)};
  for (const auto& poly : polygons) {
    float x0 = 1e30f, y0 = 1e30f, x1 = -1e30f, y1 = -1e30f;
    for (const auto& q : poly.points) x0 = std::min(x0, q.x), y0 = std::min(y0, q.y), x1 = std::max(x1, q.x), y1 = std::max(y1, q.y);
    std::vector<std::vector<cv::Point>> whole{rounded(poly.points)};
    if (poly.ignore || std::min(x1 - x0, y1 - y0) < o.min_text_size) {
      cv::fillPoly(t.shrink_mask, whole, 0.0);
      continue;
    }
    double offset = db_offset(poly.points, o.shrink_ratio);
    auto shrunk = offset_polygon(poly.points, -offset);
    if (offset <= 0 || shrunk.empty()) {
      cv::fillPoly(t.shrink_mask, whole, 0.0);
      continue;
    }
    cv::fillPoly(t.shrink_map, shrunk, 1.0);
    auto grown = offset_polygon(poly.points, offset);
    if (grown.empty()) continue;
    cv::fillPoly(t.threshold_mask, grown, 1.0);
    draw_border(t.threshold_map, poly.points, grown[0], offset);
  }
  t.threshold_map = t.threshold_map * (o.thresh_max - o.thresh_min) + o.thresh_min;
  return t;
}

// ---- dataset ---------------------------------------------------------------------------------

DetDataset::DetDataset(std::vector<DetSample> samples, DetDataOptions options)
    : samples_(std::move(samples)), options_(options) {
  SKIFF_CHECK(!samples_.empty(), "the detection dataset has no image");
  SKIFF_CHECK(options_.min_scale > 0 && options_.min_scale <= options_.max_scale,
              "augmentation scales must satisfy 0 < min <= max, got [{}, {}]", options_.min_scale, options_.max_scale);
  SKIFF_CHECK(options_.crop_h >= 32 && options_.crop_w >= 32 && options_.crop_h % 32 == 0 && options_.crop_w % 32 == 0,
              "detection crops must be multiples of 32, at least 32, got {}x{}", options_.crop_h, options_.crop_w);
  for (const auto& s : samples_)
    if (!fs::exists(s.image)) throw IoError(fmt::format("{}: image listed in the labels does not exist", s.image));
}

data::Example DetDataset::get(int64_t index) const {
  Generator gen{uint64_t(index)};
  return get(index, gen);
}

namespace {

// The columns (or rows) no polygon covers, as a 0/1 mask over [0, size).
std::vector<char> free_positions(const std::vector<DetPolygon>& polys, int size, bool columns) {
  std::vector<char> free(size_t(size), 1);
  for (const auto& p : polys) {
    float lo = 1e30f, hi = -1e30f;
    for (const auto& q : p.points) lo = std::min(lo, columns ? q.x : q.y), hi = std::max(hi, columns ? q.x : q.y);
    for (int i = std::max(0, int(std::floor(lo))); i <= std::min(size - 1, int(std::ceil(hi))); ++i) free[size_t(i)] = 0;
  }
  return free;
}

// Two free positions at least min_side apart, or the whole range.
std::pair<int, int> pick_range(const std::vector<char>& free, int min_side, Generator& gen) {
  std::vector<int> candidates;
  for (size_t i = 0; i < free.size(); ++i)
    if (free[i]) candidates.push_back(int(i));
  const int size = int(free.size());
  if (candidates.size() < 2) return {0, size - 1};
  int a = candidates[size_t(gen.uniform() * double(candidates.size())) % candidates.size()];
  int b = candidates[size_t(gen.uniform() * double(candidates.size())) % candidates.size()];
  if (a > b) std::swap(a, b);
  if (b - a < min_side) return {0, size - 1};
  return {a, b};
}

bool inside(const DetPolygon& p, const cv::Rect& r) {
  for (const auto& q : p.points)
    if (q.x < float(r.x) || q.y < float(r.y) || q.x > float(r.x + r.width) || q.y > float(r.y + r.height)) return false;
  return true;
}

// EastRandomCropData's region: bounded by rows and columns that cut no text,
// holding at least one polygon to learn from; the whole image when none is found.
cv::Rect crop_region(const std::vector<DetPolygon>& polys, int rows, int cols, const DetDataOptions& o, Generator& gen) {
  auto free_x = free_positions(polys, cols, true), free_y = free_positions(polys, rows, false);
  for (int attempt = 0; attempt < o.max_tries; ++attempt) {
    auto [x0, x1] = pick_range(free_x, int(o.min_crop_side_ratio * cols), gen);
    auto [y0, y1] = pick_range(free_y, int(o.min_crop_side_ratio * rows), gen);
    cv::Rect r(x0, y0, x1 - x0 + 1, y1 - y0 + 1);
    for (const auto& p : polys)
      if (!p.ignore && inside(p, r)) return r;
  }
  return {0, 0, cols, rows};
}

Tensor to_tensor(const cv::Mat& m) {
  Tensor t = empty({m.rows, m.cols}, DType::Float32);
  cv::Mat view(m.rows, m.cols, CV_32F, t.data<float>());
  m.copyTo(view);
  return t;
}

}  // namespace

data::Example DetDataset::get(int64_t index, Generator& gen) const {
  SKIFF_CHECK_INDEX(index >= 0 && index < size(), "sample {} out of range [0, {})", index, size());
  const DetSample& sample = samples_[size_t(index)];
  cv::Mat image = to_bgr8(read_image(sample.image));
  std::vector<DetPolygon> polys = sample.polygons;

  // IaaAugment: mirror, then rotate about the centre (text leaving the image is ignored).
  if (options_.flip_prob > 0 && gen.uniform() < options_.flip_prob) {
    cv::flip(image, image, 1);
    for (auto& p : polys)
      for (auto& q : p.points) q.x = float(image.cols - 1) - q.x;
  }
  if (options_.max_rotation_deg > 0) {
    double angle = (2 * gen.uniform() - 1) * options_.max_rotation_deg;
    cv::Mat m = cv::getRotationMatrix2D(cv::Point2f(float(image.cols) / 2, float(image.rows) / 2), angle, 1.0);
    cv::warpAffine(image, image, m, image.size(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
    for (auto& p : polys) {
      cv::transform(p.points, p.points, m);
      if (!inside(p, {0, 0, image.cols - 1, image.rows - 1})) p.ignore = true;
    }
  }

  if (options_.max_scale != 1 || options_.min_scale != 1) {
    double f = options_.min_scale + gen.uniform() * (options_.max_scale - options_.min_scale);
    cv::Size size(std::max(8, int(std::lround(image.cols * f))), std::max(8, int(std::lround(image.rows * f))));
    double fx = double(size.width) / image.cols, fy = double(size.height) / image.rows;
    cv::resize(image, image, size);
    for (auto& p : polys)
      for (auto& q : p.points) q.x = float(q.x * fx), q.y = float(q.y * fy);
  }

  cv::Rect region = crop_region(polys, image.rows, image.cols, options_, gen);
  double scale = std::min(double(options_.crop_w) / region.width, double(options_.crop_h) / region.height);
  cv::Mat canvas = cv::Mat::zeros(options_.crop_h, options_.crop_w, CV_8UC3);
  cv::Size scaled(std::max(1, std::min(options_.crop_w, int(std::lround(region.width * scale)))),
                  std::max(1, std::min(options_.crop_h, int(std::lround(region.height * scale)))));
  cv::Mat resized;
  cv::resize(image(region), resized, scaled);
  resized.copyTo(canvas(cv::Rect({0, 0}, scaled)));
  std::vector<DetPolygon> kept;
  for (auto& p : polys) {
    if (!inside(p, region)) continue;
    for (auto& q : p.points) q = (q - cv::Point2f(float(region.x), float(region.y))) * float(scale);
    kept.push_back(std::move(p));
  }

  DetTargets t = make_det_targets(kept, options_.crop_h, options_.crop_w, options_.targets);
  Tensor x = empty({3, options_.crop_h, options_.crop_w}, DType::Float32);
  normalize_det_image(canvas, std::span<float>(x.data<float>(), size_t(x.numel())), options_.normalize);
  return {{"image", x},
          {"shrink_map", to_tensor(t.shrink_map)},
          {"shrink_mask", to_tensor(t.shrink_mask)},
          {"threshold_map", to_tensor(t.threshold_map)},
          {"threshold_mask", to_tensor(t.threshold_mask)}};
}

}  // namespace skiff::ocr
