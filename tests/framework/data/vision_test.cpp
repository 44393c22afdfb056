// Tests of framework/data/vision.h on small images with known geometry.
#include "framework/data/vision.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgcodecs.hpp>

#include "framework/core/threading.h"
#include "framework/io/file.h"

namespace skiff::data {
namespace {
namespace fs = std::filesystem;
using namespace skiff::data::vision;

struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("skiff_vision_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
  static inline int n = 0;
};

// [H, W, 1] uint8 with pixel (r, c) = r * W + c.
Tensor ramp(int64_t h, int64_t w) {
  std::vector<uint8_t> v(size_t(h * w));
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i);
  return from_vector(v, Shape{h, w, 1});
}
uint8_t px(const Tensor& t, int64_t r, int64_t c, int64_t ch = 0) {
  return t.data<uint8_t>()[(r * t.size(1) + c) * t.size(2) + ch];
}

// `--threads 1` must mean one busy thread: OpenCV's own pool follows skiff's count.
TEST(VisionTest, OpenCvFollowsTheThreadCount) {
  const int before = num_threads();
  set_num_threads(1);
  EXPECT_EQ(cv::getNumThreads(), 1);
  set_num_threads(2);
  EXPECT_EQ(cv::getNumThreads(), 2);
  set_num_threads(before);
}

TEST(VisionTest, DecodesPngWrittenByOpenCv) {
  TempDir d;
  cv::Mat bgr(2, 3, CV_8UC3);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) bgr.at<cv::Vec3b>(r, c) = cv::Vec3b(uchar(10 * c), uchar(100 + r), uchar(200 + c));
  ASSERT_TRUE(cv::imwrite((d.path / "img.png").string(), bgr));
  Tensor img = decode_image(d.path / "img.png");
  EXPECT_EQ(img.shape(), (Shape{2, 3, 3}));
  EXPECT_EQ(img.dtype(), DType::UInt8);
  EXPECT_EQ(px(img, 1, 2, 0), 202);  // RGB order: R = BGR's third channel
  EXPECT_EQ(px(img, 1, 2, 1), 101);
  EXPECT_EQ(px(img, 1, 2, 2), 20);
  Tensor gray = decode_image(d.path / "img.png", ColorMode::Gray);
  EXPECT_EQ(gray.shape(), (Shape{2, 3, 1}));
  // Round trip through write_image.
  write_image(d.path / "copy.png", img);
  EXPECT_EQ(decode_image(d.path / "copy.png").to_vector<uint8_t>(), img.to_vector<uint8_t>());
}

TEST(VisionTest, CorruptEmptyAndMissingFilesNameTheFile) {
  TempDir d;
  io::write_file_atomic(d.path / "bad.png", "\x89PNG\r\n\x1a\nthis is not really a png");
  io::write_file_atomic(d.path / "empty.jpg", "");
  for (const char* f : {"bad.png", "empty.jpg", "missing.png"}) {
    fs::path p = d.path / f;
    try {
      decode_image(p);
      ADD_FAILURE() << f;
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(decode_image(d.path), IoError);
  // A truncated real PNG.
  cv::Mat m(16, 16, CV_8UC3, cv::Scalar(1, 2, 3));
  std::vector<uchar> buf;
  cv::imencode(".png", m, buf);
  EXPECT_THROW(decode_image_bytes(std::string_view((const char*)buf.data(), buf.size() / 2), "half.png"), IoError);
}

TEST(VisionTest, FlipsCropAndResizeGeometry) {
  Tensor img = ramp(3, 4);
  Tensor h = hflip(img);
  EXPECT_EQ(px(h, 0, 0), 3);
  EXPECT_EQ(px(h, 2, 3), 8);
  Tensor v = vflip(img);
  EXPECT_EQ(px(v, 0, 0), 8);
  EXPECT_EQ(px(v, 2, 1), 1);
  Tensor c = crop(img, 1, 2, 2, 2);
  EXPECT_EQ(c.to_vector<uint8_t>(), (std::vector<uint8_t>{6, 7, 10, 11}));
  EXPECT_THROW(crop(img, 2, 0, 2, 2), ValueError);

  Tensor up = resize(img, 6, 8, Interp::Nearest);
  EXPECT_EQ(up.shape(), (Shape{6, 8, 1}));
  EXPECT_EQ(px(up, 5, 7), 11);
  EXPECT_EQ(px(up, 2, 2), 5);

  double scale = 0;
  Tensor kr = resize_keep_ratio(ramp(2, 4), 4, 4, 255, Interp::Nearest, &scale);
  EXPECT_EQ(kr.shape(), (Shape{4, 4, 1}));
  EXPECT_DOUBLE_EQ(scale, 1.0);
  EXPECT_EQ(px(kr, 1, 3), 7);
  EXPECT_EQ(px(kr, 2, 0), 255);  // padding below
  Tensor kr2 = resize_keep_ratio(ramp(4, 8), 4, 4, 0, Interp::Nearest, &scale);
  EXPECT_DOUBLE_EQ(scale, 0.5);
  EXPECT_EQ(px(kr2, 3, 0), 0);
}

TEST(VisionTest, RotateAndAffineMovePixelsAsExpected) {
  // A single bright pixel right of center on a 5x5 image.
  Tensor img = zeros(Shape{5, 5, 1}, DType::UInt8);
  img.data<uint8_t>()[2 * 5 + 4] = 200;
  Tensor r = rotate(img, 90, 0, Interp::Nearest);  // counter-clockwise: right -> top
  EXPECT_EQ(px(r, 0, 2), 200);
  EXPECT_EQ(px(r, 2, 4), 0);
  Tensor r180 = rotate(img, 180, 0, Interp::Nearest);
  EXPECT_EQ(px(r180, 2, 0), 200);
  Tensor t = affine(img, 0, -2, 1, 1.0, 0, 0, Interp::Nearest);  // translate left 2, down 1
  EXPECT_EQ(px(t, 3, 2), 200);
  Tensor ident = affine(ramp(4, 4), 0, 0, 0, 1.0, 0, 0, Interp::Nearest);
  EXPECT_EQ(ident.to_vector<uint8_t>(), ramp(4, 4).to_vector<uint8_t>());
}

TEST(VisionTest, ToTensorNormalizeAndColor) {
  std::vector<uint8_t> rgb = {255, 0, 51, 0, 255, 102};  // 1x2 RGB
  Tensor img = from_vector(rgb, Shape{1, 2, 3});
  Tensor t = to_tensor(img);
  EXPECT_EQ(t.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(t.dtype(), DType::Float32);
  auto tv = t.to_vector<float>();
  EXPECT_FLOAT_EQ(tv[0], 1.0f);   // R of pixel 0
  EXPECT_FLOAT_EQ(tv[1], 0.0f);   // R of pixel 1
  EXPECT_FLOAT_EQ(tv[4], 0.2f);   // B of pixel 0
  Tensor n = normalize(t, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5});
  EXPECT_FLOAT_EQ(n.to_vector<float>()[0], 1.0f);
  EXPECT_FLOAT_EQ(n.to_vector<float>()[1], -1.0f);
  EXPECT_THROW(normalize(t, {0.5}, {0.5}), ValueError);

  Tensor gray = adjust_saturation(img, 0.0);
  EXPECT_EQ(px(gray, 0, 0, 0), px(gray, 0, 0, 1));
  EXPECT_EQ(px(gray, 0, 0, 1), px(gray, 0, 0, 2));
  EXPECT_EQ(adjust_saturation(img, 1.0).to_vector<uint8_t>(), rgb);
  Tensor dark = adjust_brightness(img, 0.5);
  EXPECT_EQ(px(dark, 0, 0, 0), 128);  // 255 * 0.5 = 127.5; OpenCV rounds half to even
  Tensor flat = adjust_contrast(ramp(2, 2), 0.0);
  auto fv = flat.to_vector<uint8_t>();
  EXPECT_EQ(fv[0], fv[3]);
  Tensor blurred = gaussian_blur(ramp(5, 5), 3, 1.0);
  EXPECT_EQ(blurred.shape(), (Shape{5, 5, 1}));
  EXPECT_EQ(px(blurred, 2, 2), 12);  // a linear ramp is unchanged at the center by a symmetric kernel
  EXPECT_THROW(gaussian_blur(ramp(5, 5), 4), ValueError);
  EXPECT_THROW(hflip(zeros(Shape{2, 2})), ShapeError);
}

TEST(TransformsTest, ComposeIsDeterministicForAGeneratorState) {
  using namespace skiff::data::transforms;
  Compose pipeline({random_crop(6, 6), random_hflip(0.5), random_rotation(15), color_jitter(0.3, 0.3, 0.3),
                    gaussian_noise(4.0), to_tensor(), normalize({0.5, 0.5, 0.5}, {0.25, 0.25, 0.25})});
  std::vector<uint8_t> v(8 * 8 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t((i * 37) % 251);
  Tensor img = from_vector(v, Shape{8, 8, 3});
  Generator g1(42), g2(42), g3(43);
  Tensor a = pipeline(img, g1), b = pipeline(img, g2), c = pipeline(img, g3);
  EXPECT_EQ(a.shape(), (Shape{3, 6, 6}));
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_NE(a.to_vector<float>(), c.to_vector<float>());
  // The input is never modified.
  EXPECT_EQ(img.to_vector<uint8_t>(), v);
  // random_crop windows stay inside and cover every position over many draws.
  Generator g(1);
  auto crop = random_crop(1, 1);
  std::set<int> seen;
  for (int i = 0; i < 200; ++i) seen.insert(crop(ramp(2, 3), g).to_vector<uint8_t>()[0]);
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_THROW(random_crop(9, 9)(img, g), ValueError);
  Tensor aff = random_affine(10, 0.1, 0.9, 1.1, 5)(img, g);
  EXPECT_EQ(aff.shape(), img.shape());
}

}  // namespace
}  // namespace skiff::data
