#pragma once
/// \file vision.h
/// Image decoding and transforms, implemented with OpenCV (kept out of this
/// header: images are skiff tensors).
///
/// Image convention: an image is a contiguous CPU tensor [H, W, C] (C = 1 or 3,
/// RGB order) of uint8 or float32, until to_tensor() turns it into the network
/// layout [C, H, W] float32 in [0, 1]; normalize() works on that layout.
/// Geometric and color transforms accept HWC uint8 or float32 and return the
/// same dtype and channel count.
///
/// Two layers:
///   - skiff::data::vision: deterministic functions (resize, hflip, rotate, ...).
///   - skiff::data::transforms: Transform objects (random ones draw from the
///     Generator passed at call time) and Compose to chain them.
/// A given Generator state always produces the same output.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/core/rng.h"
#include "framework/tensor/tensor.h"

namespace skiff::data {

namespace vision {

/// How to decode: 3-channel RGB, or 1-channel grayscale.
enum class ColorMode { RGB, Gray };
/// Interpolation for resampling transforms.
enum class Interp { Nearest, Linear, Area, Cubic };

/// Decodes an image file (PNG, JPEG, BMP, ... whatever OpenCV reads) into
/// [H, W, 3] RGB or [H, W, 1] uint8. \throws IoError naming the file when it is
/// missing, unreadable, empty, or not a decodable image.
Tensor decode_image(const std::filesystem::path& path, ColorMode mode = ColorMode::RGB);
/// Decodes encoded image bytes; `name` appears in errors. \throws IoError.
Tensor decode_image_bytes(std::string_view bytes, std::string_view name = "<memory>",
                          ColorMode mode = ColorMode::RGB);
/// Encodes [H, W, C] uint8 (RGB) to a file, format from the extension; atomic.
/// \throws IoError on failure, ValueError for a bad image tensor.
void write_image(const std::filesystem::path& path, const Tensor& image);

/// Resizes to exactly [height, width].
Tensor resize(const Tensor& image, int64_t height, int64_t width, Interp interp = Interp::Linear);
/// Scales to fit inside [height, width] keeping the aspect ratio, then pads the
/// bottom and right with `pad_value` (so pixel coordinates only scale). Returns
/// the scale factor through `scale_out` when given.
Tensor resize_keep_ratio(const Tensor& image, int64_t height, int64_t width, double pad_value = 0.0,
                         Interp interp = Interp::Linear, double* scale_out = nullptr);
/// [H, W, C] uint8 -> [C, H, W] float32 / 255 (float32 input: only transposed).
Tensor to_tensor(const Tensor& image);
/// (x - mean[c]) / std[c] on [C, H, W] float32. \throws ValueError when the
/// number of means/stds does not match C or a std is 0.
Tensor normalize(const Tensor& chw, const std::vector<double>& mean, const std::vector<double>& std);
/// Rows [top, top + height), columns [left, left + width). \throws ValueError if outside.
Tensor crop(const Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width);
/// Mirror left-right / top-bottom.
Tensor hflip(const Tensor& image);
Tensor vflip(const Tensor& image);
/// Rotates by `degrees` counter-clockwise about the center, same output size,
/// uncovered pixels set to `fill`.
Tensor rotate(const Tensor& image, double degrees, double fill = 0.0, Interp interp = Interp::Linear);
/// General affine about the center: rotation (degrees, counter-clockwise),
/// translation (pixels), isotropic scale, shear (degrees, x direction).
Tensor affine(const Tensor& image, double degrees, double translate_x, double translate_y, double scale,
              double shear_degrees, double fill = 0.0, Interp interp = Interp::Linear);
/// Multiplies intensities by `factor` (saturating for uint8).
Tensor adjust_brightness(const Tensor& image, double factor);
/// Blends with the mean gray level: factor 0 gives a flat image, 1 the input.
Tensor adjust_contrast(const Tensor& image, double factor);
/// Blends with the grayscale image: factor 0 gives gray, 1 the input (3-channel only).
Tensor adjust_saturation(const Tensor& image, double factor);
/// Gaussian blur with an odd kernel size and sigma (0: derived from ksize).
Tensor gaussian_blur(const Tensor& image, int ksize, double sigma = 0.0);

}  // namespace vision

namespace transforms {

/// An image transform: image in, image out, randomness from gen.
using Transform = std::function<Tensor(const Tensor&, Generator&)>;

/// Runs transforms in order with the same generator.
class Compose {
 public:
  Compose() = default;
  explicit Compose(std::vector<Transform> ts) : ts_(std::move(ts)) {}
  Compose& add(Transform t) { ts_.push_back(std::move(t)); return *this; }
  Tensor operator()(const Tensor& image, Generator& gen) const;
  size_t size() const { return ts_.size(); }

 private:
  std::vector<Transform> ts_;
};

Transform resize(int64_t height, int64_t width, vision::Interp interp = vision::Interp::Linear);
Transform resize_keep_ratio(int64_t height, int64_t width, double pad_value = 0.0);
Transform to_tensor();
Transform normalize(std::vector<double> mean, std::vector<double> std);
/// A random [height, width] window (uniform position). \throws ValueError if larger than the image.
Transform random_crop(int64_t height, int64_t width);
/// Flips with probability p.
Transform random_hflip(double p = 0.5);
Transform random_vflip(double p = 0.5);
/// Rotation by an angle uniform in [-max_degrees, max_degrees].
Transform random_rotation(double max_degrees, double fill = 0.0);
/// Random affine: angle in [-degrees, degrees], translation up to translate *
/// size, scale in [scale_min, scale_max], shear in [-shear, shear].
Transform random_affine(double degrees, double translate, double scale_min, double scale_max, double shear);
/// Brightness/contrast/saturation factors uniform in [1 - x, 1 + x], applied in
/// that order.
Transform color_jitter(double brightness, double contrast, double saturation);
Transform gaussian_blur(int ksize, double sigma = 0.0);
/// Adds N(0, std) noise per element (intensity units; uint8 saturates).
Transform gaussian_noise(double std);

}  // namespace transforms

}  // namespace skiff::data
