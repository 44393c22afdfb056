#include "suites/detection/synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numbers>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/core/splitmix.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"

namespace skiff::detection {
namespace {

namespace fs = std::filesystem;
using Poly = std::vector<cv::Point2d>;

// Random helpers on skiff's Generator only (std distributions differ between libraries).
struct Rand {
  Generator gen;
  explicit Rand(uint64_t seed) : gen(seed) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * gen.uniform(); }
  int integer(int lo, int hi) {  // [lo, hi]
    return lo + int(std::min<double>(hi - lo, std::floor(gen.uniform() * double(hi - lo + 1))));
  }
  bool chance(double p) { return gen.uniform() < p; }
  cv::Vec3b color() { return {uint8_t(integer(0, 255)), uint8_t(integer(0, 255)), uint8_t(integer(0, 255))}; }
};

// ---- the shapes, in unit coordinates ([-1, 1] on both axes) ----------------------------------

// A shape is filled polygons; `holes` are cut out of it afterwards.
struct Shape {
  std::vector<Poly> fill, holes;
  double min_aspect = 1, max_aspect = 1;  // height / width of the unrotated shape
  double max_rotation = 0;                // degrees, drawn in [-max, max]
};

Poly circle(double cx, double cy, double r, int n = 72) {
  Poly p;
  for (int i = 0; i < n; ++i) {
    double a = 2 * std::numbers::pi * i / n;
    p.push_back({cx + r * std::cos(a), cy + r * std::sin(a)});
  }
  return p;
}

Poly regular(int n, double r, double phase, double inner = 0) {
  Poly p;
  const int k = inner > 0 ? 2 * n : n;
  for (int i = 0; i < k; ++i) {
    double a = phase + 2 * std::numbers::pi * i / k;
    double rr = (inner > 0 && i % 2) ? inner : r;
    p.push_back({rr * std::cos(a), rr * std::sin(a)});
  }
  return p;
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = [] {
    const double up = -std::numbers::pi / 2;
    const double t = 0.34;  // the cross's half arm width
    return std::vector<Shape>{
        {{circle(0, 0, 1)}, {}, 0.8, 1.25, 90},                                        // circle
        {{{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}}}, {}, 0.8, 1.25, 20},                     // square
        {{{{0, -1}, {1, 1}, {-1, 1}}}, {}, 0.75, 1.3, 180},                              // triangle
        {{regular(5, 1, up, 0.42)}, {}, 1, 1, 180},                                      // star
        {{circle(0, 0, 1)}, {circle(0, 0, 0.55)}, 0.85, 1.2, 90},                        // ring
        {{{{-t, -1}, {t, -1}, {t, -t}, {1, -t}, {1, t}, {t, t}, {t, 1}, {-t, 1}, {-t, t}, {-1, t}, {-1, -t}, {-t, -t}}},
         {}, 0.8, 1.25, 180},                                                            // cross
        {{{{0, -1}, {1, 0}, {0, 1}, {-1, 0}}}, {}, 1.4, 1.9, 15},                         // diamond
        {{regular(6, 1, 0)}, {}, 0.9, 1.1, 180},                                         // hexagon
        {{{{-1, -0.22}, {0.15, -0.22}, {0.15, -0.6}, {1, 0}, {0.15, 0.6}, {0.15, 0.22}, {-1, 0.22}}},
         {}, 0.8, 1.2, 180},                                                             // arrow
        {{circle(0, 0, 1)}, {circle(0.42, -0.18, 0.82)}, 1, 1, 180},                     // crescent
    };
  }();
  return s;
}

// ---- backgrounds and clutter ---------------------------------------------------------------------

cv::Mat background(Rand& r, int w, int h, bool flat_only) {
  cv::Mat img(h, w, CV_8UC3, cv::Scalar(r.color()));
  const int kind = flat_only ? 0 : r.integer(0, 3);
  if (kind == 1) {  // linear gradient between two colours along a random direction
    const cv::Vec3b a = r.color(), b = r.color();
    const double angle = r.uniform(0, 2 * std::numbers::pi), c = std::cos(angle), s = std::sin(angle);
    const double lo = std::min(0.0, c * w) + std::min(0.0, s * h), hi = std::max(0.0, c * w) + std::max(0.0, s * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        double f = (c * x + s * y - lo) / std::max(1e-9, hi - lo);
        auto& p = img.at<cv::Vec3b>(y, x);
        for (int k = 0; k < 3; ++k) p[k] = cv::saturate_cast<uint8_t>(a[k] + f * (b[k] - a[k]));
      }
  } else if (kind == 2) {  // smooth noise: a coarse random grid, upsampled
    const int gw = r.integer(3, 12), gh = r.integer(3, 12);
    cv::Mat grid(gh, gw, CV_8UC3);
    const cv::Vec3b base = r.color();
    const int spread = r.integer(20, 120);
    for (int y = 0; y < gh; ++y)
      for (int x = 0; x < gw; ++x)
        for (int k = 0; k < 3; ++k) grid.at<cv::Vec3b>(y, x)[k] = cv::saturate_cast<uint8_t>(base[k] + r.integer(-spread, spread));
    cv::resize(grid, img, img.size(), 0, 0, cv::INTER_CUBIC);
  } else if (kind == 3) {  // texture: stripes or checks of two colours
    const cv::Vec3b a = r.color();
    cv::Vec3b b;
    for (int k = 0; k < 3; ++k) b[k] = cv::saturate_cast<uint8_t>(a[k] + r.integer(-60, 60));
    const double period = r.uniform(4, 40), angle = r.uniform(0, std::numbers::pi);
    const double c = std::cos(angle), s = std::sin(angle);
    const bool checks = r.chance(0.4);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        bool on = int(std::floor((c * x + s * y) / period)) % 2 != 0;
        if (checks) on = on != (int(std::floor((-s * x + c * y) / period)) % 2 != 0);
        img.at<cv::Vec3b>(y, x) = on ? a : b;
      }
  }
  return img;
}

// Strokes that are no object: lines, open arcs, random-walk polylines, dots.
void clutter(Rand& r, cv::Mat& img) {
  const int n = r.integer(2, 10), w = img.cols, h = img.rows;
  for (int i = 0; i < n; ++i) {
    const cv::Scalar color(r.color());
    const int thick = r.integer(1, 3);
    switch (r.integer(0, 3)) {
      case 0:
        cv::line(img, {r.integer(0, w - 1), r.integer(0, h - 1)}, {r.integer(0, w - 1), r.integer(0, h - 1)}, color,
                 thick, cv::LINE_8);
        break;
      case 1: {
        const int start = r.integer(0, 359);
        cv::ellipse(img, {r.integer(0, w - 1), r.integer(0, h - 1)}, {r.integer(5, w / 3), r.integer(5, h / 3)},
                    r.integer(0, 179), start, start + r.integer(40, 250), color, thick, cv::LINE_8);
        break;
      }
      case 2: {
        std::vector<cv::Point> pts{{r.integer(0, w - 1), r.integer(0, h - 1)}};
        const int steps = r.integer(3, 8);
        for (int k = 0; k < steps; ++k)
          pts.push_back({std::clamp(pts.back().x + r.integer(-30, 30), 0, w - 1),
                         std::clamp(pts.back().y + r.integer(-30, 30), 0, h - 1)});
        cv::polylines(img, pts, false, color, thick, cv::LINE_8);
        break;
      }
      default:
        for (int k = r.integer(3, 30); k > 0; --k)
          cv::circle(img, {r.integer(0, w - 1), r.integer(0, h - 1)}, r.integer(1, 2), color, cv::FILLED, cv::LINE_8);
    }
  }
}

double color_distance(const cv::Vec3b& a, const cv::Scalar& b) {
  return std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]);
}

// ---- one object ---------------------------------------------------------------------------------

// The object's mask (CV_8U, 255 inside) at scale/rotation/position drawn from `r`, or empty when it cannot fit.
cv::Mat object_mask(Rand& r, const Shape& shape, const SynthDetOptions& o, int w, int h) {
  const double max_side = std::max(double(o.min_size), o.max_fraction * std::min(w, h));
  const double side = std::exp(r.uniform(std::log(double(o.min_size)), std::log(max_side)));
  const double aspect = std::exp(r.uniform(std::log(shape.min_aspect), std::log(shape.max_aspect)));
  // The longer unrotated side is `side`.
  const double hx = (aspect >= 1 ? side / aspect : side) / 2, hy = (aspect >= 1 ? side : side * aspect) / 2;
  const double angle = r.uniform(-shape.max_rotation, shape.max_rotation) * std::numbers::pi / 180;
  const double c = std::cos(angle), s = std::sin(angle);
  auto place = [&](const Poly& p) {
    Poly q;
    for (const auto& v : p) q.push_back({c * v.x * hx - s * v.y * hy, s * v.x * hx + c * v.y * hy});
    return q;
  };
  std::vector<Poly> fill, holes;
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
  for (const auto& p : shape.fill) {
    fill.push_back(place(p));
    for (const auto& v : fill.back()) x0 = std::min(x0, v.x), y0 = std::min(y0, v.y), x1 = std::max(x1, v.x), y1 = std::max(y1, v.y);
  }
  for (const auto& p : shape.holes) holes.push_back(place(p));
  // Centre so that the whole shape lies inside, with a pixel of margin for rounding.
  const double cx_lo = 1 - x0, cx_hi = w - 2 - x1, cy_lo = 1 - y0, cy_hi = h - 2 - y1;
  if (cx_hi < cx_lo || cy_hi < cy_lo) return {};
  const double cx = r.uniform(cx_lo, cx_hi), cy = r.uniform(cy_lo, cy_hi);
  auto pixels = [&](const std::vector<Poly>& polys) {
    std::vector<std::vector<cv::Point>> out;
    for (const auto& p : polys) {
      out.emplace_back();
      for (const auto& v : p) out.back().push_back({int(std::lround(cx + v.x)), int(std::lround(cy + v.y))});
    }
    return out;
  };
  cv::Mat mask = cv::Mat::zeros(h, w, CV_8U);
  cv::fillPoly(mask, pixels(fill), cv::Scalar(255), cv::LINE_8);
  if (!holes.empty()) cv::fillPoly(mask, pixels(holes), cv::Scalar(0), cv::LINE_8);
  return mask;
}

// Paints the object through its mask: solid, solid with an outline, or a two-tone gradient.
// Every colour used differs from `under` (the mean under the mask) by at least `min_dist`.
cv::Vec3b paint(Rand& r, cv::Mat& img, const cv::Mat& mask, const cv::Rect& box, const cv::Scalar& under) {
  constexpr double min_dist = 120;
  cv::Vec3b color = r.color();
  for (int tries = 0; tries < 50 && color_distance(color, under) < min_dist; ++tries) color = r.color();
  if (color_distance(color, under) < min_dist)  // the opposite colour is always far enough
    color = {uint8_t(under[0] < 128 ? 255 : 0), uint8_t(under[1] < 128 ? 255 : 0), uint8_t(under[2] < 128 ? 255 : 0)};
  img.setTo(cv::Scalar(color), mask);
  const int style = r.integer(0, 3);
  cv::Vec3b other;
  const double f = r.chance(0.5) ? 0.55 : 1.6;
  for (int k = 0; k < 3; ++k) other[k] = cv::saturate_cast<uint8_t>(color[k] * f + (f > 1 ? 20 : 0));
  if (style == 0 || color_distance(other, under) < min_dist || std::min(box.width, box.height) < 16) return color;
  if (style == 1) {  // an outline: the mask's pixels within 2 px of its edge
    cv::Mat inner;
    cv::erode(mask, inner, cv::Mat(), {-1, -1}, 2, cv::BORDER_CONSTANT, cv::Scalar(0));
    img.setTo(cv::Scalar(other), mask & ~inner);
  } else {  // a vertical or horizontal gradient from colour to the other tone
    const bool vertical = style == 2;
    for (int y = box.y; y < box.y + box.height; ++y)
      for (int x = box.x; x < box.x + box.width; ++x) {
        if (!mask.at<uint8_t>(y, x)) continue;
        double t = vertical ? double(y - box.y) / box.height : double(x - box.x) / box.width;
        auto& p = img.at<cv::Vec3b>(y, x);
        for (int k = 0; k < 3; ++k) p[k] = cv::saturate_cast<uint8_t>(color[k] + t * (other[k] - color[k]));
      }
  }
  return color;
}

void add_noise(Rand& r, cv::Mat& img) {
  const double sigma = r.uniform(0, 6);
  if (sigma < 0.5) return;
  for (int y = 0; y < img.rows; ++y) {
    auto* p = img.ptr<uint8_t>(y);
    for (int x = 0; x < img.cols * 3; ++x) p[x] = cv::saturate_cast<uint8_t>(p[x] + sigma * r.gen.normal());
  }
}

}  // namespace

const std::vector<std::string>& synth_class_names() {
  static const std::vector<std::string> names{"circle", "square", "triangle", "star",  "ring",
                                              "cross",  "diamond", "hexagon", "arrow", "crescent"};
  return names;
}

void check_synth_options(const SynthDetOptions& o) {
  SKIFF_CHECK(o.width >= 64 && o.width <= 4096 && o.height >= 64 && o.height <= 4096,
              "det synth: --size: expected width and height in [64, 4096], got {}x{}", o.width, o.height);
  SKIFF_CHECK(o.max_objects >= 1 && o.max_objects <= 50, "det synth: --max_objects: expected 1..50, got {}",
              o.max_objects);
  SKIFF_CHECK(o.min_size >= 8, "det synth: min_size: expected >= 8, got {}", o.min_size);
  SKIFF_CHECK(o.max_fraction > 0 && o.max_fraction <= 1, "det synth: max_fraction: expected (0, 1], got {}",
              o.max_fraction);
  SKIFF_CHECK(o.min_size <= o.max_fraction * std::min(o.width, o.height),
              "det synth: --size: {}x{} is too small for objects of {} px", o.width, o.height, o.min_size);
  SKIFF_CHECK(o.min_visible >= 0 && o.min_visible <= 1, "det synth: min_visible: expected [0, 1], got {}",
              o.min_visible);
}

SynthDetImage render_synth_detection(const SynthDetOptions& o, uint64_t seed) {
  check_synth_options(o);
  Rand r(splitmix64(seed));
  const int w = o.width, h = o.height;
  SynthDetImage out;
  out.image = background(r, w, h, o.flat_background);
  if (o.clutter) clutter(r, out.image);
  out.owner = cv::Mat(h, w, CV_16S, cv::Scalar(-1));
  const int n = r.integer(1, o.max_objects);
  const auto& all = shapes();
  for (int i = 0; i < n; ++i) {
    const int cls = r.integer(0, int(all.size()) - 1);
    for (int attempt = 0; attempt < 30; ++attempt) {
      cv::Mat mask = object_mask(r, all[size_t(cls)], o, w, h);
      if (mask.empty()) continue;
      const cv::Rect box = cv::boundingRect(mask);
      if (box.area() == 0) continue;
      // The occlusion rule: every earlier object keeps min_visible of its pixels.
      bool ok = true;
      for (size_t j = 0; j < out.objects.size() && ok; ++j) {
        const auto& prev = out.objects[j];
        const cv::Rect pb(int(prev.box.x0), int(prev.box.y0), int(prev.box.x1 - prev.box.x0), int(prev.box.y1 - prev.box.y0));
        if (!o.occlusion) {
          ok = (pb & box).area() == 0;
          continue;
        }
        const cv::Rect both = pb & box;
        if (both.area() == 0) continue;
        int64_t hidden = cv::countNonZero((out.owner(both) == int16_t(j)) & mask(both));
        ok = double(prev.area - hidden) >= o.min_visible * double(prev.pixels);
      }
      if (!ok) continue;
      const cv::Scalar under = cv::mean(out.image, mask);
      SynthObject obj;
      obj.category_id = cls + 1;
      obj.box = Box{float(box.x), float(box.y), float(box.x + box.width), float(box.y + box.height)};
      obj.pixels = obj.area = cv::countNonZero(mask);
      obj.color = paint(r, out.image, mask, box, under);
      for (size_t j = 0; j < out.objects.size(); ++j) {
        auto& prev = out.objects[j];
        const cv::Rect pb(int(prev.box.x0), int(prev.box.y0), int(prev.box.x1 - prev.box.x0), int(prev.box.y1 - prev.box.y0));
        const cv::Rect both = pb & box;
        if (both.area()) prev.area -= cv::countNonZero((out.owner(both) == int16_t(j)) & mask(both));
      }
      out.owner.setTo(cv::Scalar(int(out.objects.size())), mask);
      out.objects.push_back(obj);
      break;
    }
  }
  if (o.noise) add_noise(r, out.image);
  return out;
}

SynthDetSummary write_synth_detection_dataset(const std::string& dir, int count, uint64_t seed,
                                              const SynthDetOptions& options, int64_t start_id,
                                              const std::function<void(int, int)>& progress) {
  SKIFF_CHECK(count >= 0, "det synth: --count: expected >= 0, got {}", count);
  SKIFF_CHECK(start_id >= 0, "det synth: --start_id: expected >= 0, got {}", start_id);
  check_synth_options(options);
  const fs::path root(dir);
  std::error_code ec;
  fs::create_directories(root / "images", ec);
  SKIFF_CHECK_T(IoError, !ec, "det synth: cannot create '{}': {}", (root / "images").string(), ec.message());
  // An older annotations.json would make a half-rewritten set look complete.
  fs::remove(root / "annotations.json", ec);
  SKIFF_CHECK_T(IoError, !ec, "det synth: cannot remove the old '{}': {}", (root / "annotations.json").string(),
                ec.message());

  nlohmann::ordered_json images = nlohmann::ordered_json::array(), anns = nlohmann::ordered_json::array(),
                         cats = nlohmann::ordered_json::array();
  SynthDetSummary sum;
  for (int i = 0; i < count; ++i) {
    const int64_t id = start_id + i;
    const SynthDetImage s = render_synth_detection(options, splitmix64(seed) ^ splitmix64(uint64_t(id) + 1));
    const std::string name = fmt::format("{:06d}.jpg", id);
    const std::vector<uint8_t> jpg = data::encode_image(s.image, ".jpg", 95);
    io::write_file_atomic(root / "images" / name, std::string_view(reinterpret_cast<const char*>(jpg.data()), jpg.size()));
    images.push_back({{"id", id}, {"file_name", name}, {"width", s.image.cols}, {"height", s.image.rows}});
    for (size_t k = 0; k < s.objects.size(); ++k) {
      const auto& obj = s.objects[k];
      const int x = int(obj.box.x0), y = int(obj.box.y0), bw = int(obj.box.x1 - obj.box.x0), bh = int(obj.box.y1 - obj.box.y0);
      anns.push_back({{"id", id * 100 + int64_t(k) + 1},
                      {"image_id", id},
                      {"category_id", obj.category_id},
                      {"bbox", {x, y, bw, bh}},
                      {"area", obj.area},
                      {"iscrowd", 0}});
      ++sum.annotations;
      (obj.area < 32 * 32 ? sum.small : obj.area < 96 * 96 ? sum.medium : sum.large)++;
    }
    ++sum.images;
    if (progress) progress(i + 1, count);
  }
  const auto& names = synth_class_names();
  for (size_t c = 0; c < names.size(); ++c) cats.push_back({{"id", int(c) + 1}, {"name", names[c]}, {"supercategory", "shape"}});
  nlohmann::ordered_json doc{{"images", images}, {"annotations", anns}, {"categories", cats}};
  io::write_file_atomic(root / "annotations.json", doc.dump(1) + "\n");
  return sum;
}

}  // namespace skiff::detection
