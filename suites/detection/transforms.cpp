#include "suites/detection/transforms.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "framework/data/image_io.h"

namespace skiff::detection {

using config::Key;
using config::Schema;
using config::Section;
using config::Type;

namespace {

// Random draws from skiff's Generator only, so a seed gives the same numbers everywhere.
double uniform(Generator& g, double lo, double hi) { return lo + (hi - lo) * g.uniform(); }
int randint(Generator& g, int lo, int hi) {  // [lo, hi]
  if (hi <= lo) return lo;
  return lo + std::min(hi - lo, int(std::floor(g.uniform() * double(hi - lo + 1))));
}
template <class T>
void shuffle(std::vector<T>& v, Generator& g) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[size_t(randint(g, 0, int(i) - 1))]);
}

// Keeps the boxes (and their labels and crowd flags) whose index passes `keep`.
template <class F>
void filter_boxes(DetSample& s, F keep) {
  size_t out = 0;
  for (size_t i = 0; i < s.boxes.size(); ++i) {
    if (!keep(i)) continue;
    s.boxes[out] = s.boxes[i], s.labels[out] = s.labels[i], s.is_crowd[out] = s.is_crowd[i];
    ++out;
  }
  s.boxes.resize(out), s.labels.resize(out), s.is_crowd.resize(out);
}

void clip_boxes(std::vector<Box>& boxes, float w, float h) {
  for (auto& b : boxes)
    b = {std::clamp(b.x0, 0.f, w), std::clamp(b.y0, 0.f, h), std::clamp(b.x1, 0.f, w), std::clamp(b.y1, 0.f, h)};
}

void check_image(const DetSample& s, const char* who) {
  SKIFF_CHECK(!s.image.empty(), "{}: {}: no image (put Decode first)", s.where, who);
}

int interp_flag(int64_t interp) { return int(interp); }  // cv2's numbering: 0 nearest .. 4 lanczos4

// ---- reading ---------------------------------------------------------------------------------

class Decode final : public DetTransform {
 public:
  std::vector<std::string> needs() const override { return {}; }
  std::vector<std::string> gives() const override { return {"image", "hwc"}; }
  void apply(DetSample& s, Generator&) const override {
    if (!s.path.empty() || s.image.empty()) s.image = data::read_image_file(s.path);
    s.orig_h = s.image.rows, s.orig_w = s.image.cols;
    s.scale_y = s.scale_x = 1;
    s.chw = false;
    clip_boxes(s.boxes, float(s.image.cols), float(s.image.rows));
  }
};

// ---- geometry --------------------------------------------------------------------------------

class RandomFlip final : public DetTransform {
 public:
  explicit RandomFlip(const Section& s) : prob_(s.number("prob", 0.5)) {}
  void apply(DetSample& s, Generator& gen) const override {
    check_image(s, "RandomFlip");
    if (gen.uniform() >= prob_) return;
    cv::flip(s.image, s.image, 1);
    const float w = float(s.image.cols);
    for (auto& b : s.boxes) b = {w - b.x1, b.y0, w - b.x0, b.y1};
  }

 private:
  double prob_;
};

// SSD-style crop: for a random IoU threshold (or no crop), up to num_attempts crops of random
// scale and aspect; the first whose IoU with some box reaches the threshold and keeps at least one
// box centre inside is taken. Boxes whose centre is outside are dropped; the rest are clipped.
class RandomCrop final : public DetTransform {
 public:
  explicit RandomCrop(const Section& s) {
    if (s.has("aspect_ratio") && !s.get("aspect_ratio").IsNull()) aspect_ = pair(s, "aspect_ratio", {0.5, 2.0});
    else if (s.has("aspect_ratio")) use_aspect_ = false;
    thresholds_ = s.numbers("thresholds", thresholds_);
    scaling_ = pair(s, "scaling", {0.3, 1.0});
    if (scaling_[0] <= 0 || scaling_[1] > 1)
      throw ValueError(fmt::format("{}: expected 0 < low <= high <= 1, got [{}, {}]", s.where("scaling"), scaling_[0],
                                   scaling_[1]));
    num_attempts_ = int(s.integer("num_attempts", num_attempts_, 1));
    allow_no_crop_ = s.boolean("allow_no_crop", true);
    cover_all_box_ = s.boolean("cover_all_box", false);
    if (s.boolean("is_mask_crop", false))
      throw ValueError(fmt::format("{}: masks are not supported", s.where("is_mask_crop")));
    iof_ = s.text("ioumode", "iou") == "iof";
  }
  void apply(DetSample& s, Generator& gen) const override {
    check_image(s, "RandomCrop");
    if (s.boxes.empty()) return;
    const int h = s.image.rows, w = s.image.cols;
    std::vector<double> order = thresholds_;
    if (allow_no_crop_) order.push_back(-1);  // -1: no crop
    shuffle(order, gen);
    for (double thresh : order) {
      if (thresh < 0) return;
      for (int attempt = 0; attempt < num_attempts_; ++attempt) {
        double scale = uniform(gen, scaling_[0], scaling_[1]), hs, ws;
        if (use_aspect_) {
          double ar = uniform(gen, std::max(aspect_[0], scale * scale), std::min(aspect_[1], 1 / (scale * scale)));
          hs = scale / std::sqrt(ar), ws = scale * std::sqrt(ar);
        } else {
          hs = scale, ws = uniform(gen, scaling_[0], scaling_[1]);
          if (hs * h / (ws * w) < 0.5 || hs * h / (ws * w) > 2) continue;
        }
        const int ch = std::clamp(int(h * hs), 1, h), cw = std::clamp(int(w * ws), 1, w);
        const int cy = randint(gen, 0, h - ch), cx = randint(gen, 0, w - cw);
        const Box crop{float(cx), float(cy), float(cx + cw), float(cy + ch)};
        double best = 0, worst = 1;
        for (const auto& b : s.boxes) {
          double v = overlap(b, crop);
          best = std::max(best, v), worst = std::min(worst, v);
        }
        if (best < thresh || (cover_all_box_ && worst < thresh)) continue;
        std::vector<char> keep(s.boxes.size(), 0);
        bool any = false;
        for (size_t i = 0; i < s.boxes.size(); ++i) {
          const Box& b = s.boxes[i];
          const float mx = (b.x0 + b.x1) / 2, my = (b.y0 + b.y1) / 2;
          Box c{std::max(b.x0, crop.x0) - crop.x0, std::max(b.y0, crop.y0) - crop.y0,
                std::min(b.x1, crop.x1) - crop.x0, std::min(b.y1, crop.y1) - crop.y0};
          keep[i] = mx > crop.x0 && mx < crop.x1 && my > crop.y0 && my < crop.y1 && c.x1 > c.x0 && c.y1 > c.y0;
          any = any || keep[i];
        }
        if (!any) continue;
        s.image = s.image(cv::Rect(cx, cy, cw, ch)).clone();
        for (auto& b : s.boxes) {
          b = {std::max(b.x0, crop.x0) - crop.x0, std::max(b.y0, crop.y0) - crop.y0, std::min(b.x1, crop.x1) - crop.x0,
               std::min(b.y1, crop.y1) - crop.y0};
        }
        filter_boxes(s, [&](size_t i) { return keep[i] != 0; });
        return;
      }
    }
  }

 private:
  static std::array<double, 2> pair(const Section& s, const std::string& key, std::vector<double> fallback) {
    auto v = s.numbers(key, fallback);
    if (v.size() != 2 || v[0] > v[1] || v[0] <= 0)
      throw ValueError(fmt::format("{}: expected [low, high] with 0 < low <= high", s.where(key)));
    return {v[0], v[1]};
  }
  double overlap(const Box& b, const Box& crop) const {
    const float iw = std::min(b.x1, crop.x1) - std::max(b.x0, crop.x0), ih = std::min(b.y1, crop.y1) - std::max(b.y0, crop.y0);
    if (iw <= 0 || ih <= 0) return 0;
    const double inter = double(iw) * ih;
    if (iof_) return b.area() > 0 ? inter / b.area() : 0;
    return inter / (double(b.area()) + crop.area() - inter);
  }

  bool use_aspect_ = true;
  std::array<double, 2> aspect_{0.5, 2.0}, scaling_{0.3, 1.0};
  std::vector<double> thresholds_{0.0, 0.1, 0.3, 0.5, 0.7, 0.9};
  int num_attempts_ = 50;
  bool allow_no_crop_ = true, cover_all_box_ = false, iof_ = false;
};

// Places the image at a random spot of a canvas up to `ratio` times larger, filled with fill_value.
class RandomExpand final : public DetTransform {
 public:
  explicit RandomExpand(const Section& s) : ratio_(s.number("ratio", 4.0)), prob_(s.number("prob", 0.5)) {
    if (ratio_ < 1) throw ValueError(fmt::format("{}: must be >= 1, got {}", s.where("ratio"), ratio_));
    auto fill = s.numbers("fill_value", std::vector<double>{127.5, 127.5, 127.5});
    if (fill.size() == 1) fill.assign(3, fill[0]);
    if (fill.size() != 3) throw ValueError(fmt::format("{}: expected 1 or 3 numbers", s.where("fill_value")));
    fill_ = cv::Scalar(fill[2], fill[1], fill[0]);  // given as R, G, B
  }
  void apply(DetSample& s, Generator& gen) const override {
    check_image(s, "RandomExpand");
    if (gen.uniform() >= prob_ || ratio_ <= 1.01) return;
    const double r = uniform(gen, 1, ratio_);
    const int h = s.image.rows, w = s.image.cols, eh = int(h * r), ew = int(w * r);
    const int y = randint(gen, 0, eh - h), x = randint(gen, 0, ew - w);
    cv::Mat canvas(eh, ew, s.image.type(), fill_);
    s.image.copyTo(canvas(cv::Rect(x, y, w, h)));
    s.image = canvas;
    for (auto& b : s.boxes) b = {b.x0 + x, b.y0 + y, b.x1 + x, b.y1 + y};
  }

 private:
  double ratio_, prob_;
  cv::Scalar fill_;
};

// The size rule of Resize: target [h, w]; keep_ratio scales by min(short target / short side,
// long target / long side).
void resize_sample(DetSample& s, int th, int tw, bool keep_ratio, int interp) {
  check_image(s, "Resize");
  const int h = s.image.rows, w = s.image.cols;
  int nh = th, nw = tw;
  if (keep_ratio) {
    const double scale = std::min(double(std::min(th, tw)) / std::min(h, w), double(std::max(th, tw)) / std::max(h, w));
    nh = std::max(1, int(std::lround(h * scale))), nw = std::max(1, int(std::lround(w * scale)));
  }
  const float sy = float(nh) / float(h), sx = float(nw) / float(w);
  if (nh != h || nw != w) cv::resize(s.image, s.image, cv::Size(nw, nh), 0, 0, interp);
  for (auto& b : s.boxes) b = {b.x0 * sx, b.y0 * sy, b.x1 * sx, b.y1 * sy};
  clip_boxes(s.boxes, float(nw), float(nh));
  s.scale_y *= sy, s.scale_x *= sx;
}

// A size given as N or [h, w].
std::array<int, 2> read_size(const YAML::Node& n, const std::string& where) {
  try {
    if (n.IsScalar()) {
      int v = n.as<int>();
      if (v >= 1) return {v, v};
    } else if (n.IsSequence() && n.size() == 2) {
      int h = n[0].as<int>(), w = n[1].as<int>();
      if (h >= 1 && w >= 1) return {h, w};
    }
  } catch (const YAML::Exception&) {
  }
  throw ValueError(fmt::format("{}: expected a size N or [h, w] of positive integers", where));
}

int read_interp(const Section& s) {
  int64_t v = s.integer("interp", 2);
  if (v > 4) throw ValueError(fmt::format("{}: expected 0..4 (nearest, linear, cubic, area, lanczos4), got {}", s.where("interp"), v));
  return int(v);
}

class Resize final : public DetTransform {
 public:
  explicit Resize(const Section& s)
      : size_(read_size(s.get("target_size"), s.where("target_size"))),
        keep_ratio_(s.boolean("keep_ratio", true)),
        interp_(read_interp(s)) {}
  void apply(DetSample& s, Generator&) const override {
    resize_sample(s, size_[0], size_[1], keep_ratio_, interp_flag(interp_));
  }

 private:
  std::array<int, 2> size_;
  bool keep_ratio_;
  int interp_;
};

class BatchRandomResize final : public DetTransform {
 public:
  explicit BatchRandomResize(const Section& s)
      : keep_ratio_(s.boolean("keep_ratio", true)),
        interp_(read_interp(s)),
        random_size_(s.boolean("random_size", true)),
        random_interp_(s.boolean("random_interp", false)) {
    YAML::Node t = s.get("target_size");
    const std::string where = s.where("target_size");
    if (random_size_) {
      if (!t.IsSequence() || t.size() == 0)
        throw ValueError(fmt::format("{}: with random_size, expected a list of sizes (N or [h, w])", where));
      for (size_t i = 0; i < t.size(); ++i) sizes_.push_back(read_size(t[i], fmt::format("{}[{}]", where, i)));
    } else {
      sizes_.push_back(read_size(t, where));
    }
  }
  bool batch_only() const override { return true; }
  void apply(DetSample& s, Generator& gen) const override {
    std::vector<DetSample> one{std::move(s)};
    BatchState state;
    apply_batch(one, state, gen);
    s = std::move(one[0]);
  }
  void apply_batch(std::vector<DetSample>& batch, BatchState&, Generator& gen) const override {
    const auto size = sizes_[random_size_ ? size_t(randint(gen, 0, int(sizes_.size()) - 1)) : 0];
    static constexpr int kInterps[] = {cv::INTER_NEAREST, cv::INTER_LINEAR, cv::INTER_AREA, cv::INTER_CUBIC,
                                       cv::INTER_LANCZOS4};
    const int interp = random_interp_ ? kInterps[randint(gen, 0, 4)] : interp_;
    for (auto& s : batch) resize_sample(s, size[0], size[1], keep_ratio_, interp);
  }

 private:
  std::vector<std::array<int, 2>> sizes_;
  bool keep_ratio_;
  int interp_;
  bool random_size_, random_interp_;
};

// ---- colour ----------------------------------------------------------------------------------

// Each of hue, saturation, contrast, brightness is [low, high, prob]: with probability prob a
// factor (hue: degrees) is drawn from [low, high]. Brightness scales the pixels, contrast blends
// with the mean grey, saturation with the grey image, hue turns the HSV hue. With random_apply
// the four are taken in a random order and the first `count` are tried.
class RandomDistort final : public DetTransform {
 public:
  explicit RandomDistort(const Section& s) {
    hue_ = triple(s, "hue", {-18, 18, 0.5});
    saturation_ = triple(s, "saturation", {0.5, 1.5, 0.5});
    contrast_ = triple(s, "contrast", {0.5, 1.5, 0.5});
    brightness_ = triple(s, "brightness", {0.5, 1.5, 0.5});
    random_apply_ = s.boolean("random_apply", true);
    count_ = int(s.integer("count", 4, 1));
    random_channel_ = s.boolean("random_channel", false);
  }
  void apply(DetSample& s, Generator& gen) const override {
    check_image(s, "RandomDistort");
    SKIFF_CHECK(s.image.type() == CV_8UC3, "{}: RandomDistort expects the decoded 8-bit image (before NormalizeImage)",
                s.where);
    std::vector<int> order{0, 1, 2, 3};  // brightness, contrast, saturation, hue
    int n = 4;
    if (random_apply_) shuffle(order, gen), n = std::min(count_, 4);
    cv::Mat f;
    s.image.convertTo(f, CV_32FC3);
    for (int k = 0; k < n; ++k) {
      const auto& t = order[size_t(k)] == 0 ? brightness_ : order[size_t(k)] == 1 ? contrast_
                      : order[size_t(k)] == 2 ? saturation_ : hue_;
      if (gen.uniform() >= t[2]) continue;
      const double v = uniform(gen, t[0], t[1]);
      switch (order[size_t(k)]) {
        case 0: f *= v; break;
        case 1: {
          cv::Mat gray;
          cv::cvtColor(cv::min(cv::max(f, 0), 255), gray, cv::COLOR_BGR2GRAY);
          const double mean = cv::mean(gray)[0];
          f = f * v + cv::Scalar::all(mean * (1 - v));
          break;
        }
        case 2: {
          cv::Mat gray, gray3;
          cv::cvtColor(cv::min(cv::max(f, 0), 255), gray, cv::COLOR_BGR2GRAY);
          cv::cvtColor(gray, gray3, cv::COLOR_GRAY2BGR);
          f = f * v + gray3 * (1 - v);
          break;
        }
        default: {
          cv::Mat hsv;
          cv::cvtColor(cv::min(cv::max(f, 0), 255) / 255.0, hsv, cv::COLOR_BGR2HSV);  // H in degrees
          for (int y = 0; y < hsv.rows; ++y) {
            auto* p = hsv.ptr<cv::Vec3f>(y);
            for (int x = 0; x < hsv.cols; ++x) p[x][0] = float(std::fmod(p[x][0] + v + 360.0, 360.0));
          }
          cv::cvtColor(hsv, f, cv::COLOR_HSV2BGR);
          f *= 255.0;
        }
      }
    }
    if (random_channel_ && gen.uniform() < 0.5) {
      std::vector<int> perm{0, 1, 2};
      shuffle(perm, gen);
      std::vector<cv::Mat> planes, out(3);
      cv::split(f, planes);
      for (int c = 0; c < 3; ++c) out[size_t(c)] = planes[size_t(perm[size_t(c)])];
      cv::merge(out, f);
    }
    f.convertTo(s.image, CV_8UC3);
  }

 private:
  static std::array<double, 3> triple(const Section& s, const std::string& key, std::vector<double> fallback) {
    auto v = s.numbers(key, fallback);
    if (v.size() != 3 || v[0] > v[1] || v[2] < 0 || v[2] > 1)
      throw ValueError(fmt::format("{}: expected [low, high, prob] with low <= high and prob in [0, 1]", s.where(key)));
    return {v[0], v[1], v[2]};
  }
  std::array<double, 3> hue_{}, saturation_{}, contrast_{}, brightness_{};
  bool random_apply_ = true, random_channel_ = false;
  int count_ = 4;
};

// ---- tensors ---------------------------------------------------------------------------------

class NormalizeImage final : public DetTransform {
 public:
  explicit NormalizeImage(const Section& s) {
    auto mean = s.numbers("mean", std::vector<double>{0.485, 0.456, 0.406});
    auto std = s.numbers("std", std::vector<double>{0.229, 0.224, 0.225});
    if (mean.size() != 3) throw ValueError(fmt::format("{}: expected 3 numbers (R, G, B)", s.where("mean")));
    if (std.size() != 3) throw ValueError(fmt::format("{}: expected 3 numbers (R, G, B)", s.where("std")));
    for (double v : std)
      if (v == 0) throw ValueError(fmt::format("{}: must not be 0", s.where("std")));
    scale_ = s.boolean("is_scale", true) ? 1.0 / 255.0 : 1.0;
    const bool mean_std = s.text("norm_type", "mean_std") == "mean_std";
    for (int c = 0; c < 3; ++c) {  // BGR channel c is RGB channel 2 - c
      mean_[size_t(c)] = mean_std ? mean[size_t(2 - c)] : 0.0;
      std_[size_t(c)] = mean_std ? std[size_t(2 - c)] : 1.0;
    }
  }
  void apply(DetSample& s, Generator&) const override {
    check_image(s, "NormalizeImage");
    cv::Mat f;
    s.image.convertTo(f, CV_32FC3);
    for (int y = 0; y < f.rows; ++y) {
      auto* p = f.ptr<cv::Vec3f>(y);
      for (int x = 0; x < f.cols; ++x)
        for (int c = 0; c < 3; ++c) p[x][c] = float((p[x][c] * scale_ - mean_[size_t(c)]) / std_[size_t(c)]);
    }
    s.image = f;
  }

 private:
  double scale_ = 1.0 / 255.0;
  std::array<double, 3> mean_{}, std_{};
};

class Permute final : public DetTransform {
 public:
  std::vector<std::string> gives() const override { return {"chw"}; }
  std::vector<std::string> removes() const override { return {"hwc"}; }
  void apply(DetSample& s, Generator&) const override {
    check_image(s, "Permute");
    s.chw = true;  // the image stays a cv::Mat; collate_det_batch() writes it as [3, H, W]
  }
};

class PadBatch final : public DetTransform {
 public:
  explicit PadBatch(const Section& s) : stride_(int(s.integer("pad_to_stride", 0, 0))) {}
  std::vector<std::string> needs() const override { return {"image", "chw"}; }
  bool batch_only() const override { return true; }
  void apply(DetSample&, Generator&) const override {}
  void apply_batch(std::vector<DetSample>&, BatchState& state, Generator&) const override {
    state.pad_to_stride = stride_;
  }

 private:
  int stride_;
};

class PadGt final : public DetTransform {
 public:
  explicit PadGt(const Section& s) {
    if (!s.boolean("return_gt_mask", true))
      throw ValueError(fmt::format("{}: only true is supported (the mask is always given)", s.where("return_gt_mask")));
  }
  std::vector<std::string> needs() const override { return {"image"}; }
  bool batch_only() const override { return true; }
  void apply(DetSample&, Generator&) const override {}
  void apply_batch(std::vector<DetSample>&, BatchState& state, Generator&) const override { state.pad_gt = true; }
};

Key prob_key(std::string name, std::string help) {
  return Key{.name = std::move(name), .type = Type::Number, .help = std::move(help), .min = 0, .max = 1};
}

// The reader's keys; its transform lists name registered "det transform"s.
Schema reader_schema() {
  det_transforms();  // registers them on first use
  return Schema{{Key{.name = "sample_transforms", .type = Type::Components, .kind = "det transform"},
                 Key{.name = "batch_transforms", .type = Type::Components, .kind = "det transform"},
                 Key{.name = "batch_size", .type = Type::Integer, .min = 1},
                 Key{.name = "shuffle", .type = Type::Boolean},
                 Key{.name = "drop_last", .type = Type::Boolean},
                 Key{.name = "num_workers", .type = Type::Integer, .min = 0},
                 Key{.name = "use_shared_memory", .type = Type::Boolean},
                 Key{.name = "collate_batch", .type = Type::Boolean},
                 Key{.name = "fuse_normalize", .type = Type::Boolean},
                 Key{.name = "inputs_def", .type = Type::Any}}};
}

}  // namespace

void DetTransform::apply_batch(std::vector<DetSample>& batch, BatchState&, Generator& gen) const {
  for (auto& s : batch) apply(s, gen);
}

const DetTransformFactory& det_transforms() {
  static DetTransformFactory f("det transform");
  static std::once_flag once;
  std::call_once(once, [] {
    using Made = std::unique_ptr<DetTransform>;
    const Key interp{.name = "interp", .type = Type::Integer, .help = "0 nearest, 1 linear, 2 cubic, 3 area, 4 lanczos4",
                     .min = 0, .max = 4};
    const Key keep_ratio{.name = "keep_ratio", .type = Type::Boolean};
    f.add("Decode", "read the image (HWC, BGR uint8)", Schema{},
          [](const Section&) -> Made { return std::make_unique<Decode>(); });
    f.add("RandomCrop", "SSD-style crop keeping boxes whose centre stays inside",
          Schema{{Key{.name = "aspect_ratio", .type = Type::Any, .help = "[low, high] or null"},
                  Key{.name = "thresholds", .type = Type::Numbers, .min = 0, .max = 1},
                  Key{.name = "scaling", .type = Type::Numbers, .min = 0, .max = 1},
                  Key{.name = "num_attempts", .type = Type::Integer, .min = 1},
                  Key{.name = "allow_no_crop", .type = Type::Boolean},
                  Key{.name = "cover_all_box", .type = Type::Boolean},
                  Key{.name = "is_mask_crop", .type = Type::Boolean},
                  Key{.name = "ioumode", .type = Type::String, .choices = {"iou", "iof"}}}},
          [](const Section& s) -> Made { return std::make_unique<RandomCrop>(s); });
    f.add("RandomFlip", "horizontal flip with probability prob", Schema{{prob_key("prob", "0.5")}},
          [](const Section& s) -> Made { return std::make_unique<RandomFlip>(s); });
    f.add("RandomDistort", "brightness, contrast, saturation, hue: each [low, high, prob]",
          Schema{{Key{.name = "hue", .type = Type::Numbers}, Key{.name = "saturation", .type = Type::Numbers},
                  Key{.name = "contrast", .type = Type::Numbers}, Key{.name = "brightness", .type = Type::Numbers},
                  Key{.name = "random_apply", .type = Type::Boolean},
                  Key{.name = "count", .type = Type::Integer, .min = 1, .max = 4},
                  Key{.name = "random_channel", .type = Type::Boolean}}},
          [](const Section& s) -> Made { return std::make_unique<RandomDistort>(s); });
    f.add("RandomExpand", "place on a canvas up to ratio times larger",
          Schema{{Key{.name = "ratio", .type = Type::Number, .min = 1, .max = 16}, prob_key("prob", "0.5"),
                  Key{.name = "fill_value", .type = Type::Numbers, .min = 0, .max = 255}}},
          [](const Section& s) -> Made { return std::make_unique<RandomExpand>(s); });
    f.add("Resize", "resize to target_size [h, w] (keep_ratio: fit)",
          Schema{{Key{.name = "target_size", .type = Type::Any, .help = "N or [h, w]", .required = true}, keep_ratio,
                  interp}},
          [](const Section& s) -> Made { return std::make_unique<Resize>(s); });
    f.add("BatchRandomResize", "one random target size (and interpolation) per batch",
          Schema{{Key{.name = "target_size", .type = Type::Any, .help = "sizes N or [h, w]", .required = true},
                  keep_ratio, interp, Key{.name = "random_size", .type = Type::Boolean},
                  Key{.name = "random_interp", .type = Type::Boolean}}},
          [](const Section& s) -> Made { return std::make_unique<BatchRandomResize>(s); });
    f.add("NormalizeImage", "(x * scale - mean) / std, mean and std as R, G, B",
          Schema{{Key{.name = "mean", .type = Type::Numbers}, Key{.name = "std", .type = Type::Numbers},
                  Key{.name = "is_scale", .type = Type::Boolean},
                  Key{.name = "norm_type", .type = Type::String, .choices = {"mean_std", "none"}}}},
          [](const Section& s) -> Made { return std::make_unique<NormalizeImage>(s); });
    f.add("Permute", "HWC to CHW", Schema{}, [](const Section&) -> Made { return std::make_unique<Permute>(); });
    f.add("PadBatch", "pad the batch's images bottom/right to a common size, a multiple of pad_to_stride",
          Schema{{Key{.name = "pad_to_stride", .type = Type::Integer, .min = 0}}},
          [](const Section& s) -> Made { return std::make_unique<PadBatch>(s); });
    f.add("PadGT", "pad boxes and labels to the batch's most, with a mask",
          Schema{{Key{.name = "return_gt_mask", .type = Type::Boolean}, Key{.name = "pad_img", .type = Type::Boolean}}},
          [](const Section& s) -> Made { return std::make_unique<PadGt>(s); });
  });
  return f;
}

DetPipeline::DetPipeline(const Section& reader) : where_(reader.where("sample_transforms")) {
  const DetTransformFactory& factory = det_transforms();
  config::validate(reader, reader_schema());
  std::set<std::string> available;
  for (const char* list : {"sample_transforms", "batch_transforms"}) {
    const bool batch = std::string(list) == "batch_transforms";
    auto entries = config::component_list(reader, list);
    std::vector<std::unique_ptr<DetTransform>> steps;
    for (const auto& e : entries) steps.push_back(factory.make(e));
    for (size_t i = 0; i < steps.size(); ++i) {
      const auto& e = entries[i];
      if (!batch && steps[i]->batch_only())
        throw ValueError(fmt::format("{}: {} works on whole batches: list it under batch_transforms", e.where, e.name));
      for (const auto& need : steps[i]->needs()) {
        if (available.count(need)) continue;
        std::string hint = need == "chw" ? " (put Permute before it)" : need == "image" ? " (put Decode first)" : "";
        if (need == "hwc") hint = available.count("chw") ? " (it must come before Permute)" : " (put Decode first)";
        throw ValueError(fmt::format("{}: {} needs '{}', which no transform before it gives{}", e.where, e.name, need, hint));
      }
      for (const auto& r : steps[i]->removes()) available.erase(r);
      for (const auto& g : steps[i]->gives()) available.insert(g);
    }
    (batch ? batch_ : sample_) = std::move(steps);
  }
}

void DetPipeline::run_sample(DetSample& sample, Generator& gen) const {
  for (const auto& t : sample_) t->apply(sample, gen);
}

DetBatch DetPipeline::run_batch(std::vector<DetSample> batch, Generator& gen) const {
  BatchState state;
  for (const auto& t : batch_) t->apply_batch(batch, state, gen);
  return collate_det_batch(std::move(batch), state);
}

DetBatch DetPipeline::run(std::vector<DetSample> batch, Generator& gen) const {
  for (auto& s : batch) run_sample(s, gen);
  return run_batch(std::move(batch), gen);
}

DetBatch collate_det_batch(std::vector<DetSample> batch, const BatchState& state) {
  SKIFF_CHECK(!batch.empty(), "collate_det_batch: expected at least one sample");
  int H = 0, W = 0;
  for (const auto& s : batch) {
    SKIFF_CHECK(!s.image.empty() && s.image.channels() == 3, "{}: collate: expected a decoded 3-channel image", s.where);
    SKIFF_CHECK(s.chw, "{}: collate: the image is still HWC; end the transforms with Permute", s.where);
    if (state.pad_to_stride < 0)
      SKIFF_CHECK(H == 0 || (s.image.rows == H && s.image.cols == W),
                  "{}: collate: images of the batch differ in size ({}x{} and {}x{}); add PadBatch to batch_transforms",
                  s.where, W, H, s.image.cols, s.image.rows);
    H = std::max(H, s.image.rows), W = std::max(W, s.image.cols);
  }
  if (state.pad_to_stride > 0) {
    const int k = state.pad_to_stride;
    H = (H + k - 1) / k * k, W = (W + k - 1) / k * k;
  }
  const int64_t n = int64_t(batch.size());
  DetBatch out;
  out.images = zeros({n, 3, H, W}, DType::Float32);
  out.im_shape = empty({n, 2}, DType::Float32);
  out.scale_factor = empty({n, 2}, DType::Float32);
  out.orig_size = empty({n, 2}, DType::Float32);
  size_t most = 1;
  for (int64_t i = 0; i < n; ++i) {
    const DetSample& s = batch[size_t(i)];
    cv::Mat f;
    s.image.convertTo(f, CV_32FC3);
    float* img = out.images.data<float>() + i * 3 * H * W;
    for (int y = 0; y < f.rows; ++y) {
      const auto* p = f.ptr<cv::Vec3f>(y);
      for (int x = 0; x < f.cols; ++x)
        for (int c = 0; c < 3; ++c) img[int64_t(c) * H * W + int64_t(y) * W + x] = p[x][2 - c];  // R, G, B
    }
    float* row = out.im_shape.data<float>() + 2 * i;
    row[0] = float(s.image.rows), row[1] = float(s.image.cols);
    row = out.scale_factor.data<float>() + 2 * i;
    row[0] = s.scale_y, row[1] = s.scale_x;
    row = out.orig_size.data<float>() + 2 * i;
    row[0] = float(s.orig_h), row[1] = float(s.orig_w);
    out.gt_boxes.emplace_back(), out.gt_labels.emplace_back(), out.crowd_boxes.emplace_back();
    for (size_t k = 0; k < s.boxes.size(); ++k) {
      if (s.is_crowd[k]) {
        out.crowd_boxes.back().push_back(s.boxes[k]);
      } else {
        out.gt_boxes.back().push_back(s.boxes[k]);
        out.gt_labels.back().push_back(s.labels[k]);
      }
    }
    most = std::max(most, out.gt_boxes.back().size());
    out.image_ids.push_back(s.image_id);
    out.paths.push_back(s.path);
  }
  if (state.pad_gt) {
    const int64_t m = int64_t(most);
    out.pad_gt_boxes = zeros({n, m, 4}, DType::Float32);
    out.pad_gt_labels = zeros({n, m}, DType::Int64);
    out.pad_gt_mask = zeros({n, m}, DType::Float32);
    for (int64_t i = 0; i < n; ++i)
      for (size_t k = 0; k < out.gt_boxes[size_t(i)].size(); ++k) {
        const Box& b = out.gt_boxes[size_t(i)][k];
        float* p = out.pad_gt_boxes.data<float>() + (i * m + int64_t(k)) * 4;
        p[0] = b.x0, p[1] = b.y0, p[2] = b.x1, p[3] = b.y1;
        out.pad_gt_labels.data<int64_t>()[i * m + int64_t(k)] = out.gt_labels[size_t(i)][k];
        out.pad_gt_mask.data<float>()[i * m + int64_t(k)] = 1;
      }
  }
  return out;
}

DetReaderSettings read_det_reader_settings(const Section& reader) {
  config::validate(reader, reader_schema());
  return {.batch_size = int(reader.integer("batch_size", 1, 1)),
          .shuffle = reader.boolean("shuffle", false),
          .drop_last = reader.boolean("drop_last", false)};
}

}  // namespace skiff::detection
