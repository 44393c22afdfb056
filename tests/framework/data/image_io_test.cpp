// Tests of framework/data/image_io.h. OpenCV's imgcodecs is the oracle: every
// decodable sample is also decoded with cv::imdecode(IMREAD_COLOR) and the
// pixels must be identical. PNGs of every color type / bit depth and CMYK
// JPEGs, which cv::imencode cannot make, are written with libpng/libjpeg here.
#include "framework/data/image_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on
#include <png.h>
#include <zlib.h>

#include <fmt/format.h>

#include <filesystem>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::data {
namespace {
namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("skiff_image_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
  static inline int n = 0;
};

// A smooth gradient with some noise: exercises JPEG chroma and PNG filters.
cv::Mat sample(int rows, int cols, int type, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  cv::Mat m(rows, cols, type);
  const int ch = m.channels();
  const bool wide = m.depth() == CV_16U;
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x)
      for (int c = 0; c < ch; ++c) {
        const int v = (x * 7 + y * 3 + c * 60 + int(rng() % 24)) % 256;
        if (wide)
          m.ptr<uint16_t>(y)[x * ch + c] = uint16_t(v * 257 + int(rng() % 256));
        else
          m.ptr<uint8_t>(y)[x * ch + c] = uint8_t(v);
      }
  return m;
}

cv::Mat ours(const Bytes& b, const std::string& name = "test") { return decode_image({b.data(), b.size()}, name); }
cv::Mat opencv(const Bytes& b) { return cv::imdecode(b, cv::IMREAD_COLOR); }

void expect_same(const cv::Mat& a, const cv::Mat& b, const std::string& what) {
  ASSERT_FALSE(b.empty()) << what;
  ASSERT_EQ(a.type(), CV_8UC3) << what;
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(cv::norm(a, b, cv::NORM_INF), 0.0) << what;
}

void png_write_to_vector(png_structp png, png_bytep data, size_t n) {
  auto* out = static_cast<Bytes*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + n);
}

// A PNG of any color type / depth with pseudo-random samples (and a palette
// with transparency for palette images).
Bytes make_png(int color, int depth, bool interlaced, int w = 13, int h = 9) {
  Bytes out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &out, png_write_to_vector, nullptr);
  png_set_IHDR(png, info, w, h, depth, color, interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (color == PNG_COLOR_TYPE_PALETTE) {
    std::vector<png_color> pal(size_t(1) << depth);
    for (size_t i = 0; i < pal.size(); ++i) pal[i] = {uint8_t(i * 37), uint8_t(255 - i * 11), uint8_t(i * 91)};
    png_set_PLTE(png, info, pal.data(), int(pal.size()));
    png_byte alpha[2] = {0, 128};
    png_set_tRNS(png, info, alpha, 2, nullptr);
  }
  png_write_info(png, info);
  const int channels = color == PNG_COLOR_TYPE_RGB ? 3 : color == PNG_COLOR_TYPE_RGBA ? 4 : color == PNG_COLOR_TYPE_GA ? 2 : 1;
  const size_t row_bytes = (size_t(w) * channels * depth + 7) / 8;
  std::mt19937 rng(uint32_t(color * 100 + depth));
  std::vector<Bytes> rows(h, Bytes(row_bytes));
  std::vector<png_bytep> ptrs;
  for (auto& r : rows) {
    for (auto& b : r) b = uint8_t(rng());
    ptrs.push_back(r.data());
  }
  png_write_image(png, ptrs.data());
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return out;
}

// A 4-component (Adobe CMYK) JPEG written with libjpeg.
Bytes make_cmyk_jpeg(int w, int h) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = JDIMENSION(w);
  c.image_height = JDIMENSION(h);
  c.input_components = 4;
  c.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  jpeg_start_compress(&c, TRUE);
  cv::Mat m = sample(h, w, CV_8UC4, 7);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = m.ptr(int(c.next_scanline));
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  Bytes out(buf, buf + size);
  std::free(buf);
  return out;
}

// Inserts an APP1 Exif segment with the given Orientation right after SOI.
Bytes with_exif_orientation(const Bytes& jpeg, int orientation, bool big_endian) {
  Bytes tiff = big_endian ? Bytes{'M', 'M', 0, 42, 0, 0, 0, 8} : Bytes{'I', 'I', 42, 0, 8, 0, 0, 0};
  auto put16 = [&](int v) {
    if (big_endian) tiff.insert(tiff.end(), {uint8_t(v >> 8), uint8_t(v)});
    else tiff.insert(tiff.end(), {uint8_t(v), uint8_t(v >> 8)});
  };
  put16(2);  // two entries: an unrelated tag (ImageWidth, LONG) first, then Orientation
  put16(0x0100), put16(4), put16(1), put16(0), put16(100), put16(0);
  put16(0x0112), put16(3), put16(1), put16(0), put16(orientation), put16(0);
  tiff.insert(tiff.end(), {0, 0, 0, 0});
  Bytes app1 = {'E', 'x', 'i', 'f', 0, 0};
  app1.insert(app1.end(), tiff.begin(), tiff.end());
  const size_t len = app1.size() + 2;
  Bytes out = {0xFF, 0xD8, 0xFF, 0xE1, uint8_t(len >> 8), uint8_t(len)};
  out.insert(out.end(), app1.begin(), app1.end());
  out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
  return out;
}

Bytes cv_encode(const cv::Mat& m, const std::string& ext, const std::vector<int>& params = {}) {
  Bytes b;
  EXPECT_TRUE(cv::imencode(ext, m, b, params));
  return b;
}

TEST(ImageIoTest, PngMatchesOpenCvForEveryColorTypeAndDepth) {
  const std::vector<std::pair<int, std::vector<int>>> kinds = {
      {PNG_COLOR_TYPE_GRAY, {1, 2, 4, 8, 16}}, {PNG_COLOR_TYPE_PALETTE, {1, 2, 4, 8}},
      {PNG_COLOR_TYPE_RGB, {8, 16}},           {PNG_COLOR_TYPE_GA, {8, 16}},
      {PNG_COLOR_TYPE_RGBA, {8, 16}}};
  for (const auto& [color, depths] : kinds)
    for (int depth : depths)
      for (bool interlaced : {false, true}) {
        const Bytes b = make_png(color, depth, interlaced);
        expect_same(ours(b), opencv(b), fmt::format("color {} depth {} interlaced {}", color, depth, interlaced));
      }
  // And files written by OpenCV itself, 8- and 16-bit.
  for (int type : {CV_8UC1, CV_8UC3, CV_8UC4, CV_16UC1, CV_16UC3, CV_16UC4}) {
    const Bytes b = cv_encode(sample(31, 47, type), ".png");
    expect_same(ours(b), opencv(b), fmt::format("OpenCV PNG type {}", type));
  }
}

TEST(ImageIoTest, JpegMatchesOpenCv) {
  const cv::Mat color = sample(37, 53, CV_8UC3), gray = sample(37, 53, CV_8UC1);
  const std::vector<std::pair<std::string, Bytes>> cases = {
      {"color q90", cv_encode(color, ".jpg", {cv::IMWRITE_JPEG_QUALITY, 90})},
      {"color q40", cv_encode(color, ".jpg", {cv::IMWRITE_JPEG_QUALITY, 40})},
      {"progressive", cv_encode(color, ".jpg", {cv::IMWRITE_JPEG_PROGRESSIVE, 1})},
      {"optimized", cv_encode(color, ".jpg", {cv::IMWRITE_JPEG_OPTIMIZE, 1})},
      {"grayscale", cv_encode(gray, ".jpg")},
      {"our encoder", encode_image(color, ".jpg", 80)},
      {"our gray encoder", encode_image(gray, ".jpeg", 80)},
      {"cmyk", make_cmyk_jpeg(29, 17)},
  };
  for (const auto& [what, b] : cases) expect_same(ours(b), opencv(b), what);
}

TEST(ImageIoTest, JpegExifOrientationIsAppliedLikeImread) {
  const Bytes plain = cv_encode(sample(24, 40, CV_8UC3), ".jpg");
  const cv::Mat upright = ours(plain);
  for (int o = 1; o <= 8; ++o)
    for (bool be : {false, true}) {
      const Bytes b = with_exif_orientation(plain, o, be);
      const cv::Mat m = ours(b);
      expect_same(m, opencv(b), fmt::format("orientation {} big-endian {}", o, be));
      EXPECT_EQ(m.rows, o >= 5 ? 40 : 24) << o;
    }
  // Orientation 6 (rotate 90° clockwise to view): the first column becomes the first row, reversed.
  const cv::Mat r = ours(with_exif_orientation(plain, 6, false));
  cv::Mat expected;
  cv::rotate(upright, expected, cv::ROTATE_90_CLOCKWISE);
  EXPECT_EQ(cv::norm(r, expected, cv::NORM_INF), 0.0);
  // A file on disk goes through the same path.
  TempDir d;
  const std::string path = (d.path / "rotated.jpg").string();
  io::write_file_atomic(path, {reinterpret_cast<const char*>(plain.data()), plain.size()});
  expect_same(read_image_file(path), cv::imread(path, cv::IMREAD_COLOR), "read_image_file");
  const Bytes rotated = with_exif_orientation(plain, 8, true);
  io::write_file_atomic(path, {reinterpret_cast<const char*>(rotated.data()), rotated.size()});
  expect_same(read_image_file(path), cv::imread(path, cv::IMREAD_COLOR), "read_image_file rotated");
}

TEST(ImageIoTest, BmpMatchesOpenCv) {
  const cv::Mat color = sample(11, 13, CV_8UC3), gray = sample(11, 13, CV_8UC1);  // 13: row padding
  const std::vector<std::pair<std::string, Bytes>> cases = {
      {"opencv 24-bit", cv_encode(color, ".bmp")}, {"opencv 8-bit", cv_encode(gray, ".bmp")},
      {"ours 24-bit", encode_image(color, ".bmp")}, {"ours 8-bit", encode_image(gray, ".bmp")}};
  for (const auto& [what, b] : cases) expect_same(ours(b), opencv(b), what);

  // 32-bit top-down, built from the 24-bit file: pixel (y, x) = color(y, x).
  Bytes b32 = encode_image(color, ".bmp");
  b32.resize(54);
  auto set32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) b32[at + i] = uint8_t(v >> (8 * i));
  };
  set32(22, uint32_t(-color.rows));
  b32[28] = 32;
  set32(34, uint32_t(color.rows * color.cols * 4));
  for (int y = 0; y < color.rows; ++y)
    for (int x = 0; x < color.cols; ++x) {
      const uint8_t* px = color.ptr(y) + 3 * x;
      b32.insert(b32.end(), {px[0], px[1], px[2], 0xFF});
    }
  set32(2, uint32_t(b32.size()));
  expect_same(ours(b32), opencv(b32), "32-bit top-down");
  EXPECT_EQ(cv::norm(ours(b32), color, cv::NORM_INF), 0.0);
}

TEST(ImageIoTest, EncodersRoundTrip) {
  const cv::Mat color = sample(20, 30, CV_8UC3), gray = sample(20, 30, CV_8UC1);
  for (const char* ext : {".png", ".PNG", "png", ".bmp"}) {
    EXPECT_EQ(cv::norm(ours(encode_image(color, ext)), color, cv::NORM_INF), 0.0) << ext;
    cv::Mat g3;
    cv::cvtColor(gray, g3, cv::COLOR_GRAY2BGR);
    EXPECT_EQ(cv::norm(ours(encode_image(gray, ext)), g3, cv::NORM_INF), 0.0) << ext;
  }
  // Our PNG is readable by OpenCV; level 9 is smaller than level 0.
  expect_same(opencv(encode_image(color, ".png")), color, "PNG read by OpenCV");
  EXPECT_LT(encode_image(color, ".png", 95, 9).size(), encode_image(color, ".png", 95, 0).size());
  // A non-continuous Mat (a ROI) encodes its own pixels only.
  const cv::Mat roi = color(cv::Rect(3, 2, 17, 11));
  EXPECT_EQ(cv::norm(ours(encode_image(roi, ".png")), roi, cv::NORM_INF), 0.0);
  EXPECT_EQ(cv::norm(ours(encode_image(roi, ".bmp")), roi, cv::NORM_INF), 0.0);
  // JPEG is lossy but close, and the same bytes as cv::imencode at equal quality.
  const Bytes jpg = encode_image(color, ".jpg", 95);
  cv::Mat smooth(64, 64, CV_8UC3);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) smooth.at<cv::Vec3b>(y, x) = cv::Vec3b(uint8_t(2 * x), uint8_t(3 * y), uint8_t(x + y));
  EXPECT_LT(cv::norm(ours(encode_image(smooth, ".jpg", 95)), smooth, cv::NORM_L1) / double(smooth.total() * 3), 2.0);
  EXPECT_EQ(jpg, cv_encode(color, ".jpg", {cv::IMWRITE_JPEG_QUALITY, 95}));

  EXPECT_THROW(encode_image(color, ".gif"), IoError);
  EXPECT_THROW(encode_image(cv::Mat(), ".png"), ValueError);
  EXPECT_THROW(encode_image(cv::Mat(4, 4, CV_32FC3), ".png"), TypeError);
  EXPECT_THROW(encode_image(color, ".jpg", 101), ValueError);
}

TEST(ImageIoTest, WriteImageFileIsAtomicAndNamesThePath) {
  TempDir d;
  const cv::Mat color = sample(8, 9, CV_8UC3);
  for (const char* f : {"a.png", "b.jpg", "c.bmp"}) {
    const std::string path = (d.path / f).string();
    write_image_file(path, color);
    expect_same(read_image_file(path), cv::imread(path, cv::IMREAD_COLOR), f);
  }
  for (const auto& e : fs::directory_iterator(d.path))
    EXPECT_FALSE(io::is_atomic_temp_name(e.path().filename().string())) << e.path();
  const std::string bad = (d.path / "x.tiff").string();
  try {
    write_image_file(bad, color);
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(bad));
}

TEST(ImageIoTest, BadFilesThrowIoErrorNamingTheFile) {
  TempDir d;
  const Bytes gif = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0};
  const Bytes webp = {'R', 'I', 'F', 'F', 4, 0, 0, 0, 'W', 'E', 'B', 'P'};
  const std::vector<std::pair<std::string, Bytes>> files = {
      {"empty.png", {}}, {"text.jpg", {'h', 'e', 'l', 'l', 'o'}}, {"anim.gif", gif}, {"img.webp", webp},
      {"fake.png", {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 'x', 'y'}}};
  for (const auto& [name, bytes] : files) {
    const std::string path = (d.path / name).string();
    io::write_file_atomic(path, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
    try {
      read_image_file(path);
      ADD_FAILURE() << name;
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_image_file((d.path / "missing.png").string()), IoError);
  EXPECT_THROW(read_image_file(d.path.string()), IoError);
  try {
    decode_image(gif, "anim.gif");
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("GIF"), std::string::npos) << e.what();
  }
}

TEST(ImageIoTest, TruncatedFilesThrowAtEveryLength) {
  const cv::Mat color = sample(16, 24, CV_8UC3);
  const std::vector<std::pair<std::string, Bytes>> files = {
      {"png", encode_image(color, ".png")},
      {"interlaced png", make_png(PNG_COLOR_TYPE_RGB, 8, true)},
      {"jpg", encode_image(color, ".jpg")},
      {"progressive jpg", cv_encode(color, ".jpg", {cv::IMWRITE_JPEG_PROGRESSIVE, 1})},
      {"bmp", encode_image(color, ".bmp")}};
  for (const auto& [what, b] : files)
    for (size_t n = 0; n < b.size(); ++n)
      EXPECT_THROW(decode_image({b.data(), n}, what), IoError) << what << " cut at " << n;
}

TEST(ImageIoTest, CorruptBytesNeverCrash) {
  const cv::Mat color = sample(16, 24, CV_8UC3);
  std::mt19937 rng(5);
  for (const char* ext : {".png", ".jpg", ".bmp"}) {
    const Bytes good = encode_image(color, ext);
    for (int trial = 0; trial < 300; ++trial) {
      Bytes b = good;
      for (int k = 0; k < 1 + trial % 8; ++k) b[3 + rng() % (b.size() - 3)] = uint8_t(rng());
      try {
        const cv::Mat m = ours(b);
        EXPECT_EQ(m.type(), CV_8UC3);
      } catch (const IoError&) {
      }
    }
  }
}

TEST(ImageIoTest, HugeDimensionsAreRejectedBeforeAllocating) {
  // PNG: rewrite the IHDR size (CRC errors are reported first, so fix it too).
  Bytes png = encode_image(sample(4, 4, CV_8UC3), ".png");
  auto set_be32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) png[at + i] = uint8_t(v >> (24 - 8 * i));
  };
  set_be32(16, 900000);
  set_be32(20, 900000);
  set_be32(29, uint32_t(crc32(0, png.data() + 12, 17)));
  EXPECT_THROW(ours(png), IoError);
  // BMP: 2^20 x 2^20.
  Bytes bmp = encode_image(sample(4, 4, CV_8UC3), ".bmp");
  bmp[20] = 0x10;
  bmp[24] = 0x10;
  try {
    ours(bmp);
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
  }
  // JPEG: SOF0 height/width fields set to 65000 x 65000.
  Bytes jpg = encode_image(sample(8, 8, CV_8UC3), ".jpg");
  for (size_t i = 2; i + 9 < jpg.size(); ++i)
    if (jpg[i] == 0xFF && jpg[i + 1] == 0xC0) {
      jpg[i + 5] = jpg[i + 7] = 0xFD;
      jpg[i + 6] = jpg[i + 8] = 0xE8;
      break;
    }
  try {
    ours(jpg);
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace skiff::data
