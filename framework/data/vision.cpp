#include "framework/data/vision.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <opencv2/core.hpp>
#include <opencv2/core/parallel/backend/parallel_for.openmp.hpp>
#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"

namespace skiff::data {

namespace {
// OpenCV's resizes and warps run on skiff's OpenMP threads, not on Debian
// OpenCV's own TBB workers: those spun (sched_yield) between calls on the cores
// the model kernels' OpenMP threads needed, a second pool the size of the first
// (--threads 2 over 40 images: 4k sched_yield calls, ~10% of wall in system time).
// OpenCV follows skiff's thread count, so `--threads 1` keeps one core busy.
const bool kOpenCvOnSkiffThreads = [] {
  cv::parallel::setParallelForBackend(std::make_shared<cv::parallel::openmp::ParallelForBackend>());
  add_thread_count_listener([](int n) { cv::setNumThreads(n); });
  return true;
}();
}  // namespace
namespace vision {
namespace fs = std::filesystem;

namespace {

// Checks the image convention and returns a contiguous tensor.
Tensor checked(const Tensor& img, std::string_view op) {
  SKIFF_CHECK_SHAPE(img.dim() == 3 && (img.size(2) == 1 || img.size(2) == 3),
                    "{}: expected an [H, W, C] image with C = 1 or 3, got shape {}", op, img.shape());
  SKIFF_CHECK_DTYPE(img.dtype() == DType::UInt8 || img.dtype() == DType::Float32,
                    "{}: expected a uint8 or float32 image, got {}", op, dtype_name(img.dtype()));
  SKIFF_CHECK(img.device() == kCPU, "{}: image must be on the CPU", op);
  SKIFF_CHECK_SHAPE(img.size(0) > 0 && img.size(1) > 0, "{}: empty image of shape {}", op, img.shape());
  return img.is_contiguous() ? img : detail::contiguous_copy(img);
}

int cv_type(const Tensor& t) {
  int c = int(t.size(2));
  return t.dtype() == DType::UInt8 ? CV_8UC(c) : CV_32FC(c);
}

// A Mat viewing t's memory (t must stay alive while the Mat is used).
cv::Mat as_mat(const Tensor& t) { return cv::Mat(int(t.size(0)), int(t.size(1)), cv_type(t), t.data_ptr()); }

Tensor from_mat(const cv::Mat& m) {
  DType dt = m.depth() == CV_8U ? DType::UInt8 : DType::Float32;
  SKIFF_ASSERT(m.depth() == CV_8U || m.depth() == CV_32F, "unexpected OpenCV depth {}", m.depth());
  Tensor out = empty(Shape{m.rows, m.cols, m.channels()}, dt);
  cv::Mat dst(m.rows, m.cols, m.type(), out.data_ptr());
  m.copyTo(dst);
  return out;
}

int cv_interp(Interp i) {
  switch (i) {
    case Interp::Nearest: return cv::INTER_NEAREST;
    case Interp::Linear: return cv::INTER_LINEAR;
    case Interp::Area: return cv::INTER_AREA;
    case Interp::Cubic: return cv::INTER_CUBIC;
  }
  return cv::INTER_LINEAR;
}

Tensor warp(const Tensor& image, const cv::Mat& m, double fill, Interp interp, std::string_view op) {
  Tensor img = checked(image, op);
  cv::Mat src = as_mat(img), dst;
  cv::warpAffine(src, dst, m, src.size(), cv_interp(interp), cv::BORDER_CONSTANT, cv::Scalar::all(fill));
  return from_mat(dst);
}

}  // namespace

Tensor decode_image_bytes(std::string_view bytes, std::string_view name, ColorMode mode) {
  if (bytes.empty()) SKIFF_THROW(IoError, "cannot decode image '{}': the file is empty", name);
  cv::Mat m = data::decode_image({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, std::string(name));
  cv::cvtColor(m, m, mode == ColorMode::RGB ? cv::COLOR_BGR2RGB : cv::COLOR_BGR2GRAY);
  return from_mat(m);
}

Tensor decode_image(const fs::path& path, ColorMode mode) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) SKIFF_THROW(IoError, "cannot decode image '{}': it is a directory", path.string());
  return decode_image_bytes(io::read_file(path), path.string(), mode);
}

void write_image(const fs::path& path, const Tensor& image) {
  Tensor img = checked(image, "write_image");
  SKIFF_CHECK_DTYPE(img.dtype() == DType::UInt8, "write_image: expected uint8, got {}", dtype_name(img.dtype()));
  cv::Mat m = as_mat(img).clone();
  if (m.channels() == 3) cv::cvtColor(m, m, cv::COLOR_RGB2BGR);
  data::write_image_file(path.string(), m);
}

Tensor resize(const Tensor& image, int64_t height, int64_t width, Interp interp) {
  SKIFF_CHECK(height > 0 && width > 0, "resize: target size must be positive, got {}x{}", height, width);
  Tensor img = checked(image, "resize");
  cv::Mat dst;
  cv::resize(as_mat(img), dst, cv::Size(int(width), int(height)), 0, 0, cv_interp(interp));
  return from_mat(dst);
}

Tensor resize_keep_ratio(const Tensor& image, int64_t height, int64_t width, double pad_value, Interp interp,
                         double* scale_out) {
  SKIFF_CHECK(height > 0 && width > 0, "resize_keep_ratio: target size must be positive, got {}x{}", height, width);
  Tensor img = checked(image, "resize_keep_ratio");
  double scale = std::min(double(height) / double(img.size(0)), double(width) / double(img.size(1)));
  int nh = std::clamp(int(std::lround(img.size(0) * scale)), 1, int(height));
  int nw = std::clamp(int(std::lround(img.size(1) * scale)), 1, int(width));
  cv::Mat r, dst;
  cv::resize(as_mat(img), r, cv::Size(nw, nh), 0, 0, cv_interp(interp));
  cv::copyMakeBorder(r, dst, 0, int(height) - nh, 0, int(width) - nw, cv::BORDER_CONSTANT, cv::Scalar::all(pad_value));
  if (scale_out) *scale_out = scale;
  return from_mat(dst);
}

Tensor to_tensor(const Tensor& image) {
  Tensor img = checked(image, "to_tensor");
  const int64_t H = img.size(0), W = img.size(1), C = img.size(2);
  Tensor out = empty(Shape{C, H, W}, DType::Float32);
  float* o = out.data<float>();
  if (img.dtype() == DType::UInt8) {
    const uint8_t* p = img.data<uint8_t>();
    for (int64_t i = 0; i < H * W; ++i)
      for (int64_t c = 0; c < C; ++c) o[c * H * W + i] = float(p[i * C + c]) * (1.0f / 255.0f);
  } else {
    const float* p = img.data<float>();
    for (int64_t i = 0; i < H * W; ++i)
      for (int64_t c = 0; c < C; ++c) o[c * H * W + i] = p[i * C + c];
  }
  return out;
}

Tensor normalize(const Tensor& chw, const std::vector<double>& mean, const std::vector<double>& std) {
  SKIFF_CHECK_SHAPE(chw.dim() == 3, "normalize: expected [C, H, W], got shape {}", chw.shape());
  SKIFF_CHECK_DTYPE(chw.dtype() == DType::Float32, "normalize: expected float32, got {}", dtype_name(chw.dtype()));
  const int64_t C = chw.size(0), HW = chw.size(1) * chw.size(2);
  SKIFF_CHECK(int64_t(mean.size()) == C && int64_t(std.size()) == C,
              "normalize: {} channels but {} means and {} stds", C, mean.size(), std.size());
  Tensor x = chw.is_contiguous() ? chw : detail::contiguous_copy(chw);
  Tensor out = empty(x.shape(), DType::Float32);
  const float* p = x.data<float>();
  float* o = out.data<float>();
  for (int64_t c = 0; c < C; ++c) {
    SKIFF_CHECK(std[size_t(c)] != 0.0, "normalize: std of channel {} is 0", c);
    const float m = float(mean[size_t(c)]), inv = float(1.0 / std[size_t(c)]);
    for (int64_t i = 0; i < HW; ++i) o[c * HW + i] = (p[c * HW + i] - m) * inv;
  }
  return out;
}

Tensor crop(const Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width) {
  Tensor img = checked(image, "crop");
  SKIFF_CHECK(top >= 0 && left >= 0 && height > 0 && width > 0 && top + height <= img.size(0) &&
                  left + width <= img.size(1),
              "crop: window (top {}, left {}, {}x{}) is outside the {}x{} image", top, left, height, width,
              img.size(0), img.size(1));
  return from_mat(as_mat(img)(cv::Rect(int(left), int(top), int(width), int(height))));
}

Tensor hflip(const Tensor& image) {
  Tensor img = checked(image, "hflip");
  cv::Mat dst;
  cv::flip(as_mat(img), dst, 1);
  return from_mat(dst);
}

Tensor vflip(const Tensor& image) {
  Tensor img = checked(image, "vflip");
  cv::Mat dst;
  cv::flip(as_mat(img), dst, 0);
  return from_mat(dst);
}

Tensor rotate(const Tensor& image, double degrees, double fill, Interp interp) {
  return affine(image, degrees, 0, 0, 1.0, 0.0, fill, interp);
}

Tensor affine(const Tensor& image, double degrees, double tx, double ty, double scale, double shear_degrees,
              double fill, Interp interp) {
  SKIFF_CHECK(scale > 0, "affine: scale must be positive, got {}", scale);
  SKIFF_CHECK(image.dim() == 3, "affine: expected an [H, W, C] image, got shape {}", image.shape());
  // A = R(theta) * S(scale) * Shear_x(phi), about the pixel-grid center; OpenCV's
  // y axis points down, so a counter-clockwise rotation has +sin above the diagonal.
  const double th = degrees * std::numbers::pi / 180.0, sh = std::tan(shear_degrees * std::numbers::pi / 180.0);
  const double c = std::cos(th) * scale, s = std::sin(th) * scale;
  const double a00 = c, a01 = c * sh + s, a10 = -s, a11 = -s * sh + c;
  const double cx = (double(image.size(1)) - 1) / 2, cy = (double(image.size(0)) - 1) / 2;
  cv::Mat m = (cv::Mat_<double>(2, 3) << a00, a01, cx + tx - (a00 * cx + a01 * cy),  //
               a10, a11, cy + ty - (a10 * cx + a11 * cy));
  return warp(image, m, fill, interp, "affine");
}

Tensor adjust_brightness(const Tensor& image, double factor) {
  SKIFF_CHECK(factor >= 0, "adjust_brightness: factor must be >= 0, got {}", factor);
  Tensor img = checked(image, "adjust_brightness");
  cv::Mat dst;
  as_mat(img).convertTo(dst, -1, factor, 0.0);
  return from_mat(dst);
}

Tensor adjust_contrast(const Tensor& image, double factor) {
  SKIFF_CHECK(factor >= 0, "adjust_contrast: factor must be >= 0, got {}", factor);
  Tensor img = checked(image, "adjust_contrast");
  cv::Mat src = as_mat(img), gray, dst;
  if (src.channels() == 3) cv::cvtColor(src, gray, cv::COLOR_RGB2GRAY);
  else gray = src;
  const double mean = cv::mean(gray)[0];
  src.convertTo(dst, -1, factor, mean * (1.0 - factor));
  return from_mat(dst);
}

Tensor adjust_saturation(const Tensor& image, double factor) {
  SKIFF_CHECK(factor >= 0, "adjust_saturation: factor must be >= 0, got {}", factor);
  Tensor img = checked(image, "adjust_saturation");
  if (img.size(2) == 1) return img;
  cv::Mat src = as_mat(img), gray, gray3, dst;
  cv::cvtColor(src, gray, cv::COLOR_RGB2GRAY);
  cv::cvtColor(gray, gray3, cv::COLOR_GRAY2RGB);
  cv::addWeighted(src, factor, gray3, 1.0 - factor, 0.0, dst);
  return from_mat(dst);
}

Tensor gaussian_blur(const Tensor& image, int ksize, double sigma) {
  SKIFF_CHECK(ksize > 0 && ksize % 2 == 1, "gaussian_blur: kernel size must be odd and positive, got {}", ksize);
  SKIFF_CHECK(sigma >= 0, "gaussian_blur: sigma must be >= 0, got {}", sigma);
  Tensor img = checked(image, "gaussian_blur");
  cv::Mat dst;
  cv::GaussianBlur(as_mat(img), dst, cv::Size(ksize, ksize), sigma, sigma, cv::BORDER_REFLECT_101);
  return from_mat(dst);
}

}  // namespace vision

namespace transforms {
namespace {
double uniform(Generator& g, double a, double b) { return a + (b - a) * g.uniform(); }
}  // namespace

Tensor Compose::operator()(const Tensor& image, Generator& gen) const {
  Tensor x = image;
  for (const auto& t : ts_) x = t(x, gen);
  return x;
}

Transform resize(int64_t h, int64_t w, vision::Interp interp) {
  return [=](const Tensor& x, Generator&) { return vision::resize(x, h, w, interp); };
}
Transform resize_keep_ratio(int64_t h, int64_t w, double pad) {
  return [=](const Tensor& x, Generator&) { return vision::resize_keep_ratio(x, h, w, pad); };
}
Transform to_tensor() {
  return [](const Tensor& x, Generator&) { return vision::to_tensor(x); };
}
Transform normalize(std::vector<double> mean, std::vector<double> std) {
  return [=](const Tensor& x, Generator&) { return vision::normalize(x, mean, std); };
}
Transform random_crop(int64_t h, int64_t w) {
  return [=](const Tensor& x, Generator& g) {
    SKIFF_CHECK(x.dim() == 3 && h <= x.size(0) && w <= x.size(1),
                "random_crop: {}x{} window does not fit image of shape {}", h, w, x.shape());
    int64_t top = int64_t(g.next_u64() % uint64_t(x.size(0) - h + 1));
    int64_t left = int64_t(g.next_u64() % uint64_t(x.size(1) - w + 1));
    return vision::crop(x, top, left, h, w);
  };
}
Transform random_hflip(double p) {
  return [=](const Tensor& x, Generator& g) { return g.uniform() < p ? vision::hflip(x) : x; };
}
Transform random_vflip(double p) {
  return [=](const Tensor& x, Generator& g) { return g.uniform() < p ? vision::vflip(x) : x; };
}
Transform random_rotation(double max_degrees, double fill) {
  return [=](const Tensor& x, Generator& g) {
    return vision::rotate(x, uniform(g, -max_degrees, max_degrees), fill);
  };
}
Transform random_affine(double degrees, double translate, double smin, double smax, double shear) {
  SKIFF_CHECK(smin > 0 && smin <= smax, "random_affine: bad scale range [{}, {}]", smin, smax);
  return [=](const Tensor& x, Generator& g) {
    double a = uniform(g, -degrees, degrees);
    double tx = uniform(g, -translate, translate) * double(x.size(1));
    double ty = uniform(g, -translate, translate) * double(x.size(0));
    double s = uniform(g, smin, smax), sh = uniform(g, -shear, shear);
    return vision::affine(x, a, tx, ty, s, sh);
  };
}
Transform color_jitter(double brightness, double contrast, double saturation) {
  return [=](const Tensor& x, Generator& g) {
    Tensor y = x;
    if (brightness > 0) y = vision::adjust_brightness(y, uniform(g, std::max(0.0, 1 - brightness), 1 + brightness));
    if (contrast > 0) y = vision::adjust_contrast(y, uniform(g, std::max(0.0, 1 - contrast), 1 + contrast));
    if (saturation > 0) y = vision::adjust_saturation(y, uniform(g, std::max(0.0, 1 - saturation), 1 + saturation));
    return y;
  };
}
Transform gaussian_blur(int ksize, double sigma) {
  return [=](const Tensor& x, Generator&) { return vision::gaussian_blur(x, ksize, sigma); };
}
Transform gaussian_noise(double std) {
  SKIFF_CHECK(std >= 0, "gaussian_noise: std must be >= 0, got {}", std);
  return [=](const Tensor& x, Generator& g) {
    SKIFF_CHECK_DTYPE(x.dtype() == DType::UInt8 || x.dtype() == DType::Float32,
                      "gaussian_noise: expected uint8 or float32, got {}", dtype_name(x.dtype()));
    Tensor src = x.is_contiguous() ? x : detail::contiguous_copy(x);
    Tensor out = empty(src.shape(), src.dtype());
    const int64_t n = src.numel();
    if (src.dtype() == DType::UInt8) {
      const uint8_t* p = src.data<uint8_t>();
      uint8_t* o = out.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = cv::saturate_cast<uint8_t>(double(p[i]) + std * g.normal());
    } else {
      const float* p = src.data<float>();
      float* o = out.data<float>();
      for (int64_t i = 0; i < n; ++i) o[i] = float(p[i] + std * g.normal());
    }
    return out;
  };
}

}  // namespace transforms
}  // namespace skiff::data
