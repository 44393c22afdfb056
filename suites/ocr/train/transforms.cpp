#include "suites/ocr/train/transforms.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <set>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "framework/core/registry.h"
#include "suites/ocr/det_inference_config.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/train/label_file.h"
#include "suites/ocr/train/rec_data.h"

namespace skiff::ocr {

namespace fs = std::filesystem;
using config::Key;
using config::Schema;
using config::Section;
using config::Type;

namespace {

Tensor to_tensor(const cv::Mat& m) {
  Tensor t = empty({m.rows, m.cols}, DType::Float32);
  cv::Mat view(m.rows, m.cols, CV_32F, t.data<float>());
  m.copyTo(view);
  return t;
}

Key unit_key(std::string name, std::string help) {
  return Key{.name = std::move(name), .type = Type::Number, .help = std::move(help), .min = 0, .max = 1};
}

// ---- reading -------------------------------------------------------------------------------

class DecodeImage final : public Transform {
 public:
  std::vector<std::string> gives() const override { return {"image"}; }
  bool prepare(OcrSample& s) const override {
    if (!fs::exists(s.image_path))
      throw IoError(fmt::format("{}: image listed in the labels does not exist", s.image_path));
    return true;
  }
  void apply(OcrSample& s, Generator&) const override { s.image = to_bgr8(read_image(s.image_path)); }
};

class DetLabelEncode final : public Transform {
 public:
  std::vector<std::string> gives() const override { return {"polys", "ignore_tags"}; }
  bool prepare(OcrSample& s) const override {
    s.polys = parse_det_label(s.label, s.where);
    return true;
  }
  void apply(OcrSample&, Generator&) const override {}  // prepare() parsed the label once; augmenters move copies
};

class CtcLabelEncode final : public Transform {
 public:
  explicit CtcLabelEncode(const TransformContext& c) : max_length_(c.max_text_length) {
    SKIFF_CHECK(c.charset != nullptr, "CTCLabelEncode needs the recipe's dictionary");
    encoder_ = std::make_shared<CharEncoder>(*c.charset);
  }
  std::vector<std::string> gives() const override { return {"label", "length"}; }
  // Characters missing from the dictionary are dropped; a line left empty or
  // longer than max_text_length is dropped (PaddleOCR returns None for it).
  bool prepare(OcrSample& s) const override {
    auto label = encoder_->encode(s.label);
    if (label.empty() || int(label.size()) > max_length_) return false;
    Tensor y = zeros({max_length_}, DType::Int64);
    std::copy(label.begin(), label.end(), y.data<int64_t>());
    s.out["label"] = y;
    s.out["length"] = full({}, double(label.size()), DType::Int64);
    return true;
  }
  void apply(OcrSample&, Generator&) const override {}  // encoded once in prepare()

 private:
  int max_length_;
  std::shared_ptr<CharEncoder> encoder_;
};

// ---- detection augmentation ------------------------------------------------------------------

bool inside(const DetPolygon& p, const cv::Rect& r) {
  for (const auto& q : p.points)
    if (q.x < float(r.x) || q.y < float(r.y) || q.x > float(r.x + r.width) || q.y > float(r.y + r.height)) return false;
  return true;
}

// IaaAugment: the augmenters of augmenter_args, applied in the order listed.
class IaaAugment final : public Transform {
 public:
  explicit IaaAugment(const Section& settings) {
    YAML::Node list = settings.get("augmenter_args");
    if (!list) return;
    const std::string where = settings.where("augmenter_args");
    if (!list.IsSequence()) throw ValueError(fmt::format("{}: augmenter_args must be a list of {{type, args}}", where));
    for (size_t i = 0; i < list.size(); ++i) steps_.push_back(read_step(list[i], fmt::format("{}[{}]", where, i)));
  }
  std::vector<std::string> needs() const override { return {"image", "polys"}; }
  std::vector<std::string> gives() const override { return {"image", "polys"}; }
  void apply(OcrSample& s, Generator& gen) const override {
    for (const auto& step : steps_) {
      if (step.type == Step::Flip) flip(s, step, gen);
      if (step.type == Step::Rotate) rotate(s, step, gen);
      if (step.type == Step::Resize) resize(s, step, gen);
    }
  }

 private:
  struct Step {
    enum Type { Flip, Rotate, Resize } type;
    double a = 0, b = 0;  // Flip: probability; Rotate: max |degrees|; Resize: scale range
  };

  static Step read_step(const YAML::Node& node, const std::string& where) {
    if (!node.IsMap() || !node["type"]) throw ValueError(fmt::format("{}: expected {{type: ..., args: ...}}", where));
    auto type = node["type"].as<std::string>();
    YAML::Node args = node["args"];
    auto range = [&](const char* key) {
      YAML::Node v = args ? args[key] : YAML::Node();
      if (!v || !v.IsSequence() || v.size() != 2)
        throw ValueError(fmt::format("{}: args.{} must be [low, high]", where, key));
      return std::pair{v[0].as<double>(), v[1].as<double>()};
    };
    if (type == "Fliplr") {
      double p = args && args["p"] ? args["p"].as<double>() : 0.5;
      if (p < 0 || p > 1) throw ValueError(fmt::format("{}: args.p must be in [0, 1]", where));
      return {Step::Flip, p};
    }
    if (type == "Affine") {
      auto [lo, hi] = range("rotate");
      return {Step::Rotate, std::max(std::abs(lo), std::abs(hi))};
    }
    if (type == "Resize") {
      auto [lo, hi] = range("size");
      if (!(lo > 0 && lo <= hi)) throw ValueError(fmt::format("{}: args.size needs 0 < low <= high", where));
      return {Step::Resize, lo, hi};
    }
    throw ValueError(fmt::format("{}: unknown augmenter '{}' (known: Fliplr, Affine, Resize)", where, type));
  }

  static void flip(OcrSample& s, const Step& step, Generator& gen) {
    if (step.a <= 0 || gen.uniform() >= step.a) return;
    cv::flip(s.image, s.image, 1);
    for (auto& p : s.polys)
      for (auto& q : p.points) q.x = float(s.image.cols - 1) - q.x;
  }
  // About the centre; text leaving the image is ignored from then on.
  static void rotate(OcrSample& s, const Step& step, Generator& gen) {
    if (step.a <= 0) return;
    double angle = (2 * gen.uniform() - 1) * step.a;
    cv::Mat m = cv::getRotationMatrix2D(cv::Point2f(float(s.image.cols) / 2, float(s.image.rows) / 2), angle, 1.0);
    cv::warpAffine(s.image, s.image, m, s.image.size(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
    for (auto& p : s.polys) {
      cv::transform(p.points, p.points, m);
      if (!inside(p, {0, 0, s.image.cols - 1, s.image.rows - 1})) p.ignore = true;
    }
  }
  static void resize(OcrSample& s, const Step& step, Generator& gen) {
    if (step.a == 1 && step.b == 1) return;
    double f = step.a + gen.uniform() * (step.b - step.a);
    cv::Size size(std::max(8, int(std::lround(s.image.cols * f))), std::max(8, int(std::lround(s.image.rows * f))));
    double fx = double(size.width) / s.image.cols, fy = double(size.height) / s.image.rows;
    cv::resize(s.image, s.image, size);
    for (auto& p : s.polys)
      for (auto& q : p.points) q.x = float(q.x * fx), q.y = float(q.y * fy);
  }

  std::vector<Step> steps_;
};

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

// EastRandomCropData: a region bounded by rows and columns that cut no text and
// holding at least one region to learn from (the whole image when none is found),
// scaled to fit size [h, w] keeping its ratio, padded right and bottom.
class EastRandomCropData final : public Transform {
 public:
  explicit EastRandomCropData(const Section& s) {
    auto size = s.integers("size", std::nullopt, 32);
    if (size.size() != 2 || size[0] % 32 != 0 || size[1] % 32 != 0)
      throw ValueError(fmt::format("{}: expected [h, w], multiples of 32, got [{}]", s.where("size"), fmt::join(size, ", ")));
    if (!s.boolean("keep_ratio", true))
      throw ValueError(fmt::format("{}: only keep_ratio: true is implemented", s.where("keep_ratio")));
    crop_h_ = int(size[0]), crop_w_ = int(size[1]);
    max_tries_ = int(s.integer("max_tries", max_tries_, 1));
    min_crop_side_ratio_ = s.number("min_crop_side_ratio", min_crop_side_ratio_);
  }
  std::vector<std::string> needs() const override { return {"image", "polys"}; }
  std::vector<std::string> gives() const override { return {"image", "polys"}; }
  void apply(OcrSample& s, Generator& gen) const override {
    cv::Rect region = crop_region(s.polys, s.image.rows, s.image.cols, gen);
    double scale = std::min(double(crop_w_) / region.width, double(crop_h_) / region.height);
    cv::Mat canvas = cv::Mat::zeros(crop_h_, crop_w_, s.image.type());
    cv::Size scaled(std::max(1, std::min(crop_w_, int(std::lround(region.width * scale)))),
                    std::max(1, std::min(crop_h_, int(std::lround(region.height * scale)))));
    cv::Mat resized;
    cv::resize(s.image(region), resized, scaled);
    resized.copyTo(canvas(cv::Rect({0, 0}, scaled)));
    s.image = canvas;
    std::vector<DetPolygon> kept;
    for (auto& p : s.polys) {
      if (!inside(p, region)) continue;
      for (auto& q : p.points) q = (q - cv::Point2f(float(region.x), float(region.y))) * float(scale);
      kept.push_back(std::move(p));
    }
    s.polys = std::move(kept);
  }

 private:
  cv::Rect crop_region(const std::vector<DetPolygon>& polys, int rows, int cols, Generator& gen) const {
    auto free_x = free_positions(polys, cols, true), free_y = free_positions(polys, rows, false);
    for (int attempt = 0; attempt < max_tries_; ++attempt) {
      auto [x0, x1] = pick_range(free_x, int(min_crop_side_ratio_ * cols), gen);
      auto [y0, y1] = pick_range(free_y, int(min_crop_side_ratio_ * rows), gen);
      cv::Rect r(x0, y0, x1 - x0 + 1, y1 - y0 + 1);
      for (const auto& p : polys)
        if (!p.ignore && inside(p, r)) return r;
    }
    return {0, 0, cols, rows};
  }

  int crop_h_ = 640, crop_w_ = 640;
  int max_tries_ = 10;
  double min_crop_side_ratio_ = 0.1;
};

// MakeShrinkMap / MakeBorderMap: the DB targets of the current polygons
// (det_data.h). Both skip the regions the shrink map masks out (ignored, smaller
// than min_text_size, or vanishing when shrunk), so the border map of MakeBorderMap
// uses MakeShrinkMap's default min_text_size (8).
class MakeShrinkMap final : public Transform {
 public:
  explicit MakeShrinkMap(const Section& s) {
    o_.shrink_ratio = s.number("shrink_ratio", o_.shrink_ratio);
    o_.min_text_size = s.number("min_text_size", o_.min_text_size);
    o_.border = false;
  }
  std::vector<std::string> needs() const override { return {"image", "polys"}; }
  std::vector<std::string> gives() const override { return {"shrink_map", "shrink_mask"}; }
  void apply(OcrSample& s, Generator&) const override {
    DetTargets t = make_det_targets(s.polys, s.image.rows, s.image.cols, o_);
    s.out["shrink_map"] = to_tensor(t.shrink_map);
    s.out["shrink_mask"] = to_tensor(t.shrink_mask);
  }

 private:
  DetTargetOptions o_;
};

class MakeBorderMap final : public Transform {
 public:
  explicit MakeBorderMap(const Section& s) {
    o_.shrink_ratio = s.number("shrink_ratio", o_.shrink_ratio);
    o_.thresh_min = s.number("thresh_min", o_.thresh_min);
    o_.thresh_max = s.number("thresh_max", o_.thresh_max);
    if (o_.thresh_min > o_.thresh_max)
      throw ValueError(fmt::format("{}: thresh_min {} is above thresh_max {}", s.where("thresh_min"), o_.thresh_min,
                                   o_.thresh_max));
    o_.shrink = false;
  }
  std::vector<std::string> needs() const override { return {"image", "polys"}; }
  std::vector<std::string> gives() const override { return {"threshold_map", "threshold_mask"}; }
  void apply(OcrSample& s, Generator&) const override {
    DetTargets t = make_det_targets(s.polys, s.image.rows, s.image.cols, o_);
    s.out["threshold_map"] = to_tensor(t.threshold_map);
    s.out["threshold_mask"] = to_tensor(t.threshold_mask);
  }

 private:
  DetTargetOptions o_;
};

// ToCHWImage: the HWC image as a float32 [3, H, W] tensor (values as they are).
class ToChwImage final : public Transform {
 public:
  std::vector<std::string> needs() const override { return {"image"}; }
  std::vector<std::string> gives() const override { return {"image"}; }
  void apply(OcrSample& s, Generator&) const override {
    SKIFF_CHECK(s.image.channels() == 3, "{}: ToCHWImage expects a 3-channel image, got {}", s.where, s.image.channels());
    cv::Mat f;
    s.image.convertTo(f, CV_32FC3);
    Tensor x = empty({3, f.rows, f.cols}, DType::Float32);
    std::vector<cv::Mat> planes;
    for (int c = 0; c < 3; ++c) planes.emplace_back(f.rows, f.cols, CV_32F, x.data<float>() + int64_t(c) * f.rows * f.cols);
    cv::split(f, planes);
    s.out["image"] = x;
  }
};

// ---- recognition -----------------------------------------------------------------------------

// RecAug: blur, contrast/brightness, noise and a small vertical crop, each with probability prob.
class RecAug final : public Transform {
 public:
  explicit RecAug(const Section& s) : prob_(s.number("prob", 0.4)) {}
  std::vector<std::string> needs() const override { return {"image"}; }
  std::vector<std::string> gives() const override { return {"image"}; }
  void apply(OcrSample& s, Generator& gen) const override {
    cv::Mat img = s.image.clone();
    auto chance = [&] { return gen.uniform() < prob_; };
    if (chance() && img.rows > 8) {  // crop a few rows off the top and bottom
      int top = int(gen.uniform() * img.rows * 0.08), bottom = int(gen.uniform() * img.rows * 0.08);
      img = img.rowRange(top, img.rows - bottom).clone();
    }
    if (chance()) {
      int k = gen.uniform() < 0.5 ? 3 : 5;
      cv::GaussianBlur(img, img, {k, k}, 0);
    }
    if (chance()) {
      double alpha = 0.7 + 0.6 * gen.uniform(), beta = -30 + 60 * gen.uniform();
      img.convertTo(img, -1, alpha, beta);
    }
    if (chance()) {
      cv::Mat noise(img.size(), CV_32FC3);
      double sigma = 12 * gen.uniform();
      for (int y = 0; y < noise.rows; ++y) {
        auto* row = noise.ptr<float>(y);
        for (int x = 0; x < noise.cols * 3; ++x) row[x] = float(sigma * gen.normal());
      }
      cv::Mat f;
      img.convertTo(f, CV_32FC3);
      f += noise;
      f.convertTo(img, CV_8UC3);
    }
    s.image = img;
  }

 private:
  double prob_;
};

// KeepKeys: the tensors an example holds, by name (the last step of a list).
class KeepKeys final : public Transform {
 public:
  explicit KeepKeys(const Section& s) : keys_(s.texts("keep_keys", std::vector<std::string>{})) {}
  std::vector<std::string> needs() const override { return keys_; }
  void apply(OcrSample&, Generator&) const override {}  // TransformPipeline::run keeps keys()
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  std::vector<std::string> keys_;
};

// Keys that label the sample for evaluation but are not tensors of a training
// example (PaddleOCR keeps them for its det metric): KeepKeys may list them.
const std::set<std::string> kEvaluationKeys{"shape", "polys", "ignore_tags"};

}  // namespace

// ---- the named transforms with settings others read ------------------------------------------

NormalizeImage::NormalizeImage(const Section& settings) { read_normalize_image(settings, params_); }

void NormalizeImage::apply(OcrSample& s, Generator&) const {
  SKIFF_CHECK(s.image.type() == CV_8UC3, "{}: NormalizeImage expects the decoded 8-bit BGR image", s.where);
  // The same per-value table as the inference path (preprocess.cpp), so training sees its exact inputs.
  std::array<std::array<float, 256>, 3> lut{};
  for (int c = 0; c < 3; ++c)
    for (int v = 0; v < 256; ++v) lut[size_t(c)][size_t(v)] = (float(v) * params_.scale - params_.mean[size_t(c)]) / params_.std[size_t(c)];
  cv::Mat out(s.image.rows, s.image.cols, CV_32FC3);
  for (int y = 0; y < out.rows; ++y) {
    const uint8_t* in = s.image.ptr<uint8_t>(y);
    float* o = out.ptr<float>(y);
    for (int x = 0; x < out.cols * 3; ++x) o[x] = lut[size_t(x % 3)][in[x]];
  }
  s.image = out;
}

DetResizeForTest::DetResizeForTest(const Section& settings) { read_det_resize(settings, params_); }

void DetResizeForTest::apply(OcrSample& s, Generator&) const {
  DetInputInfo info = det_input_info(s.image.rows, s.image.cols, params_);
  cv::resize(s.image, s.image, cv::Size(info.resized_w, info.resized_h));
  s.out["shape"] = from_vector(std::vector<float>{float(info.src_h), float(info.src_w), float(info.ratio_h),
                                                  float(info.ratio_w)},
                               Shape{4});
}

RecResizeImg::RecResizeImg(const Section& s) {
  auto shape = s.integers("image_shape", std::nullopt, 1);
  if (shape.size() != 3 || shape[0] != 3 || shape[1] % 16 != 0)
    throw ValueError(fmt::format("{}: expected [3, H, W] with H a multiple of 16, got [{}]", s.where("image_shape"),
                                 fmt::join(shape, ", ")));
  height_ = int(shape[1]), width_ = int(shape[2]);
  if (width_ < height_)
    throw ValueError(fmt::format("{}: W must be at least H, got [{}]", s.where("image_shape"), fmt::join(shape, ", ")));
}

void RecResizeImg::apply(OcrSample& s, Generator&) const {
  Tensor x = empty({3, height_, width_}, DType::Float32);
  RecPreprocessParams p{.height = height_, .base_width = width_, .fixed_width = width_};
  preprocess_rec_batch(std::span<const cv::Mat>(&s.image, 1), std::span<float>(x.data<float>(), size_t(x.numel())), p);
  s.out["image"] = x;
}

// ---- registry --------------------------------------------------------------------------------

const TransformFactory& transforms() {
  static TransformFactory f("transform");
  static std::once_flag once;
  std::call_once(once, [] {
    using Made = std::unique_ptr<Transform>;
    f.add("DecodeImage", "read the image (BGR)",
          Schema{{Key{.name = "img_mode", .type = Type::String, .choices = {"BGR"}},
                  Key{.name = "channel_first", .type = Type::Boolean, .help = "must be false"}}},
          [](const Section& s, const TransformContext&) -> Made {
            if (s.boolean("channel_first", false))
              throw ValueError(fmt::format("{}: DecodeImage gives HWC images; use ToCHWImage", s.where("channel_first")));
            return std::make_unique<DecodeImage>();
          });
    f.add("DetLabelEncode", "polygons and '###' ignore tags from a det label", Schema{},
          [](const Section&, const TransformContext&) -> Made { return std::make_unique<DetLabelEncode>(); });
    f.add("IaaAugment", "augmenter_args, applied in order: Fliplr {p}, Affine {rotate: [a, b]}, Resize {size: [a, b]}",
          Schema{{Key{.name = "augmenter_args", .type = Type::Any, .help = "list of {type, args}"}}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<IaaAugment>(s); });
    f.add("EastRandomCropData", "crop where no text is cut, fit into size [h, w], pad",
          Schema{{Key{.name = "size", .type = Type::Integers, .required = true, .min = 32},
                  Key{.name = "max_tries", .type = Type::Integer, .min = 1},
                  Key{.name = "keep_ratio", .type = Type::Boolean, .help = "must be true"},
                  Key{.name = "min_crop_side_ratio", .type = Type::Number, .min = 0, .max = 1}}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<EastRandomCropData>(s); });
    f.add("MakeBorderMap", "threshold map and mask",
          Schema{{Key{.name = "shrink_ratio", .type = Type::Number, .min = 0.01, .max = 0.99},
                  unit_key("thresh_min", "threshold map low value (0.3)"),
                  unit_key("thresh_max", "threshold map high value (0.7)")}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<MakeBorderMap>(s); });
    f.add("MakeShrinkMap", "shrunk text kernels and mask",
          Schema{{Key{.name = "shrink_ratio", .type = Type::Number, .min = 0.01, .max = 0.99},
                  Key{.name = "min_text_size", .type = Type::Number, .help = "pixels (8)", .min = 0}}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<MakeShrinkMap>(s); });
    f.add("DetResizeForTest", "evaluation / inference size rule",
          Schema{{Key{.name = "limit_side_len", .type = Type::Integer, .min = 32},
                  Key{.name = "limit_type", .type = Type::String, .choices = {"max", "min"}},
                  Key{.name = "resize_long", .type = Type::Integer, .help = "same as limit_side_len with max", .min = 32}}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<DetResizeForTest>(s); });
    f.add("NormalizeImage", "(x * scale - mean) / std per channel",
          Schema{{Key{.name = "scale", .type = Type::Any, .help = "a number or a fraction such as 1./255."},
                  Key{.name = "mean", .type = Type::Numbers}, Key{.name = "std", .type = Type::Numbers},
                  Key{.name = "order", .type = Type::String, .choices = {"hwc"}}}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<NormalizeImage>(s); });
    f.add("ToCHWImage", "HWC to a [3, H, W] tensor", Schema{},
          [](const Section&, const TransformContext&) -> Made { return std::make_unique<ToChwImage>(); });
    f.add("RecAug", "blur, contrast/brightness, noise and crop, each with probability prob",
          Schema{{Key{.name = "prob", .type = Type::Number, .min = 0, .max = 1}}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<RecAug>(s); });
    f.add("CTCLabelEncode", "text to dictionary indices (Global.max_text_length)", Schema{},
          [](const Section&, const TransformContext& c) -> Made { return std::make_unique<CtcLabelEncode>(c); });
    f.add("RecResizeImg", "resize to image_shape [3, H, W] keeping the ratio, to [-1, 1], pad right",
          Schema{{Key{.name = "image_shape", .type = Type::Integers, .required = true, .min = 1}}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<RecResizeImg>(s); });
    f.add("KeepKeys", "the keys an example keeps (the last step)", Schema{{Key{.name = "keep_keys", .type = Type::Strings}}},
          [](const Section& s, const TransformContext&) -> Made { return std::make_unique<KeepKeys>(s); });
  });
  return f;
}

// ---- pipeline --------------------------------------------------------------------------------

TransformPipeline::TransformPipeline(const Section& dataset, const TransformContext& context)
    : where_(dataset.where("transforms")) {
  auto entries = config::component_list(dataset, "transforms");
  const TransformFactory& factory = transforms();
  for (const auto& e : entries) {
    // Recipes are validated before this; other callers (tests, tools) get the same checks here.
    const config::ComponentInfo* info = config::Components::global().find(factory.kind(), e.name);
    if (!info) {
      std::string hint = closest_match(e.name, config::Components::global().names(factory.kind()));
      throw ValueError(fmt::format("{}: unknown transform '{}'{}", e.where, e.name,
                                   hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
    }
    config::validate(e.settings, info->schema);
    steps_.push_back(factory.make(e, context));
  }
  // Each step's inputs must come from an earlier step; the usual mistake is the order.
  std::set<std::string> available;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const auto& e = entries[i];
    const auto* keep = dynamic_cast<const KeepKeys*>(steps_[i].get());
    if (keep && i + 1 != steps_.size())
      throw ValueError(fmt::format("{}: KeepKeys must be the last transform", e.where));
    for (const auto& need : steps_[i]->needs()) {
      if (available.count(need)) continue;
      std::string later;
      for (size_t j = i + 1; j < steps_.size() && later.empty(); ++j) {
        auto g = steps_[j]->gives();
        if (std::find(g.begin(), g.end(), need) != g.end()) later = entries[j].name;
      }
      throw ValueError(fmt::format("{}: {} needs '{}', which no transform before it gives{}", e.where, e.name, need,
                                   later.empty() ? "" : fmt::format(" (put {} before it)", later)));
    }
    for (const auto& g : steps_[i]->gives()) {
      available.insert(g);
      if (!kEvaluationKeys.count(g) && std::find(outputs_.begin(), outputs_.end(), g) == outputs_.end())
        outputs_.push_back(g);
    }
    if (keep) {
      outputs_.clear();
      for (const auto& k : keep->keys())
        if (!kEvaluationKeys.count(k)) outputs_.push_back(k);
    }
  }
}

bool TransformPipeline::prepare(OcrSample& sample) const {
  for (const auto& s : steps_)
    if (!s->prepare(sample)) return false;
  return true;
}

data::Example TransformPipeline::run(OcrSample sample, Generator& gen) const {
  for (const auto& s : steps_) s->apply(sample, gen);
  data::Example out;
  for (const auto& key : outputs_) {
    auto it = sample.out.find(key);
    SKIFF_CHECK(it != sample.out.end(), "{}: '{}' is not a tensor after the transforms (add ToCHWImage for image)",
                where_, key);
    out.emplace(key, it->second);
  }
  return out;
}

void TransformPipeline::require_outputs(const std::vector<std::string>& needed) const {
  for (const auto& k : needed)
    if (std::find(outputs_.begin(), outputs_.end(), k) == outputs_.end())
      throw ValueError(fmt::format("{}: training needs '{}' in every example, and these transforms give [{}]", where_, k,
                                   fmt::join(outputs_, ", ")));
}

void TransformPipeline::throw_missing(const std::string& name) const {
  throw ValueError(fmt::format("{}: this split needs the transform {}", where_, name));
}

// ---- dataset ---------------------------------------------------------------------------------

std::vector<OcrSample> read_samples(const std::vector<std::string>& label_files, const std::string& data_dir) {
  std::vector<OcrSample> out;
  read_label_lines(label_files, data_dir, "image_path<TAB>label", [&](const LabelLine& l) {
    out.push_back(OcrSample{.image_path = l.image, .label = l.label, .where = fmt::format("{}:{}", l.file, l.line)});
  });
  return out;
}

std::shared_ptr<TransformDataset> make_simple_dataset(const Section& dataset, const TransformContext& context) {
  auto pipeline = std::make_shared<const TransformPipeline>(dataset, context);
  return std::make_shared<TransformDataset>(read_samples(dataset.texts("label_file_list"), dataset.text("data_dir", ".")),
                                            std::move(pipeline));
}

TransformDataset::TransformDataset(std::vector<OcrSample> samples, std::shared_ptr<const TransformPipeline> pipeline)
    : pipeline_(std::move(pipeline)) {
  const size_t lines = samples.size();
  for (auto& s : samples) {
    if (pipeline_->prepare(s)) samples_.push_back(std::move(s));
    else ++skipped_;
  }
  SKIFF_CHECK(!samples_.empty(), "{}: no usable sample: the label files list {} line(s) and the label encoder dropped "
              "{} (empty after dropping characters missing from the dictionary, or longer than max_text_length)",
              pipeline_->where(), lines, skipped_);
}

data::Example TransformDataset::get(int64_t index) const {
  Generator gen{uint64_t(index)};
  return get(index, gen);
}

data::Example TransformDataset::get(int64_t index, Generator& gen) const {
  SKIFF_CHECK_INDEX(index >= 0 && index < size(), "sample {} out of range [0, {})", index, size());
  return pipeline_->run(samples_[size_t(index)], gen);
}

}  // namespace skiff::ocr
