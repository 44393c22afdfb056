#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "framework/ops/nn/resample.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

// ---- interpolate ----

// Naive float64 bilinear over [N, C, H, W], written from the PyTorch index formulas.
Tensor naive_bilinear(const Tensor& x, int64_t oh, int64_t ow, bool align_corners) {
  const int64_t planes = x.shape()[0] * x.shape()[1], ih = x.shape()[2], iw = x.shape()[3];
  std::vector<double> v = contiguous(to(x, DType::Float64)).to_vector<double>(), out;
  auto source = [&](int64_t dst, int64_t in, int64_t outn, int64_t& i0, int64_t& i1, double& l) {
    double s = align_corners ? (outn > 1 ? double(in - 1) / double(outn - 1) : 0.0) : double(in) / double(outn);
    double src = align_corners ? s * double(dst) : std::max(s * (double(dst) + 0.5) - 0.5, 0.0);
    i0 = std::min(int64_t(std::floor(src)), in - 1);
    i1 = std::min(i0 + 1, in - 1);
    l = src - double(i0);
  };
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t h = 0; h < oh; ++h)
      for (int64_t w = 0; w < ow; ++w) {
        int64_t h0, h1, w0, w1;
        double lh, lw;
        source(h, ih, oh, h0, h1, lh);
        source(w, iw, ow, w0, w1, lw);
        auto at = [&](int64_t r, int64_t c) { return v[size_t((p * ih + r) * iw + c)]; };
        out.push_back((1 - lh) * ((1 - lw) * at(h0, w0) + lw * at(h0, w1)) +
                      lh * ((1 - lw) * at(h1, w0) + lw * at(h1, w1)));
      }
  return from_vector(out, {x.shape()[0], x.shape()[1], oh, ow});
}

TEST(InterpolateTest, BilinearKnownValuesBothAlignments) {
  Tensor x = from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor a = interpolate(x, {.size = {4, 4}, .mode = "bilinear", .align_corners = true});
  std::vector<float> expect_a;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) expect_a.push_back(1.f + float(j) / 3.f + 2.f * float(i) / 3.f);
  expect_allclose(a, from_vector(expect_a, {1, 1, 4, 4}), 1e-6, 0);
  Tensor b = interpolate(x, {.size = {4, 4}, .mode = "bilinear", .align_corners = false});
  expect_allclose(b, from_vector<float>({1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5,  //
                                         2.5, 2.75, 3.25, 3.5, 3.0, 3.25, 3.75, 4.0},
                                        {1, 1, 4, 4}),
                  1e-6, 0);
}

TEST(InterpolateTest, BilinearMatchesNaiveLoopsUpAndDown) {
  Generator g(1);
  Tensor x = randn({2, 3, 5, 7}, DType::Float64, &g);
  for (bool ac : {false, true})
    for (auto [oh, ow] : {std::pair<int64_t, int64_t>{9, 4}, {3, 11}, {1, 1}, {5, 7}}) {
      Tensor y = interpolate(x, {.size = {oh, ow}, .mode = "bilinear", .align_corners = ac});
      expect_allclose(y, naive_bilinear(x, oh, ow, ac), 1e-12, 1e-12);
    }
  // float32 and a strided input agree with the float64 reference.
  Tensor xs = permute(randn({2, 5, 7, 3}, DType::Float32, &g), {0, 3, 1, 2});
  expect_allclose(interpolate(xs, {.size = {8, 8}, .mode = "bilinear"}), naive_bilinear(xs, 8, 8, false), 1e-5, 1e-5);
}

TEST(InterpolateTest, NearestUsesFloorOfScaledIndex) {
  Tensor x = from_vector<float>({10, 20, 30}, {1, 1, 3});
  // in/out = 0.6: floor(0, 0.6, 1.2, 1.8, 2.4)
  EXPECT_EQ(interpolate(x, {.size = {5}}).to_vector<float>(), (std::vector<float>{10, 10, 20, 20, 30}));
  // Downsampling 3 -> 2: floor(0, 1.5)
  EXPECT_EQ(interpolate(x, {.size = {2}}).to_vector<float>(), (std::vector<float>{10, 20}));
  // scale_factor 1.7 on 5: out = floor(8.5) = 8 and indices use 1/1.7 (not 5/8):
  // floor(d * 0.588) = 0 0 1 1 2 2 3 4.
  Tensor y = from_vector<float>({0, 1, 2, 3, 4}, {1, 1, 5});
  EXPECT_EQ(interpolate(y, {.scale_factor = {1.7}}).to_vector<float>(),
            (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 4}));
  EXPECT_EQ(interpolate(y, {.size = {8}}).to_vector<float>(), (std::vector<float>{0, 0, 1, 1, 2, 3, 3, 4}));
  // 2-D nearest, doubling.
  Tensor z = from_vector<double>({1, 2, 3, 4}, {1, 1, 2, 2});
  EXPECT_EQ(interpolate(z, {.scale_factor = {2.0}}).to_vector<double>(),
            (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(InterpolateTest, LinearOn3DInput) {
  Tensor x = from_vector<double>({0, 10, 20}, {1, 1, 3});
  Tensor y = interpolate(x, {.scale_factor = {2.0}, .mode = "linear"});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 6}));
  expect_allclose(y, from_vector<double>({0, 2.5, 7.5, 12.5, 17.5, 20}, {1, 1, 6}), 1e-12, 0);
  Tensor z = interpolate(x, {.size = {5}, .mode = "linear", .align_corners = true});
  expect_allclose(z, from_vector<double>({0, 5, 10, 15, 20}, {1, 1, 5}), 1e-12, 0);
}

TEST(InterpolateTest, HalfTypes) {
  Generator g(2);
  Tensor x = randn({1, 2, 4, 4}, DType::Float32, &g);
  Tensor ref = naive_bilinear(x, 6, 3, false);
  expect_allclose(interpolate(to(x, DType::Float16), {.size = {6, 3}, .mode = "bilinear"}), ref, 1e-2, 1e-2);
  expect_allclose(interpolate(to(x, DType::BFloat16), {.size = {6, 3}, .mode = "bilinear"}), ref, 5e-2, 2e-2);
}

TEST(InterpolateTest, RejectsBadArguments) {
  Tensor x4 = zeros({1, 1, 2, 2}), x3 = zeros({1, 1, 2});
  EXPECT_THROW(interpolate(zeros({2, 2}), {.size = {4}}), ShapeError);
  EXPECT_THROW(interpolate(x4, {}), ValueError);
  EXPECT_THROW(interpolate(x4, {.size = {4, 4}, .scale_factor = {2.0}}), ValueError);
  EXPECT_THROW(interpolate(x4, {.size = {4}}), ShapeError);
  EXPECT_THROW(interpolate(x4, {.size = {4, 0}}), ValueError);
  EXPECT_THROW(interpolate(x4, {.scale_factor = {-1.0}}), ValueError);
  EXPECT_THROW(interpolate(x4, {.size = {4, 4}, .mode = "linear"}), ValueError);
  EXPECT_THROW(interpolate(x3, {.size = {4}, .mode = "bilinear"}), ValueError);
  EXPECT_THROW(interpolate(x4, {.size = {4, 4}, .mode = "bicubic"}), ValueError);
  EXPECT_THROW(interpolate(x4, {.size = {4, 4}, .align_corners = true}), ValueError);
  EXPECT_THROW(interpolate(zeros({1, 1, 2, 2}, DType::Int32), {.size = {4, 4}}), TypeError);
}

TEST(InterpolateTest, Gradcheck) {
  Tensor x = rand_leaf({1, 2, 3, 4}, 3);
  for (bool ac : {false, true})
    expect_gradcheck([ac](const std::vector<Tensor>& in) {
      return interpolate(in[0], {.size = {5, 3}, .mode = "bilinear", .align_corners = ac});
    }, {x});
  expect_gradcheck([](const std::vector<Tensor>& in) { return interpolate(in[0], {.size = {5, 7}}); }, {x});
  Tensor x3 = rand_leaf({2, 1, 4}, 4);
  expect_gradcheck([](const std::vector<Tensor>& in) {
    return interpolate(in[0], {.scale_factor = {1.5}, .mode = "linear"});
  }, {x3});
}

TEST(InterpolateTest, Gradgradcheck) {
  // The backward of the backward is interpolate again.
  Tensor x = rand_leaf({1, 1, 3, 3}, 5);
  expect_gradgradcheck([](const std::vector<Tensor>& in) {
    Tensor y = interpolate(in[0], {.size = {4, 5}, .mode = "bilinear"});
    return mul(y, y);
  }, {x});
}

// ---- pad ----

TEST(PadTest, OneDimValuesForEveryMode) {
  Tensor x = from_vector<float>({1, 2, 3}, {1, 1, 3});
  EXPECT_EQ(pad(x, {2, 2}, "reflect").to_vector<float>(), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(pad(x, {2, 1}, "replicate").to_vector<float>(), (std::vector<float>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(pad(x, {1, 2}, "constant", 9).to_vector<float>(), (std::vector<float>{9, 1, 2, 3, 9, 9}));
  EXPECT_EQ(pad(x, {-1, 1}).to_vector<float>(), (std::vector<float>{2, 3, 0}));  // negative pads crop
  EXPECT_EQ(pad(x, {0, 0}).shape(), (Shape{1, 1, 3}));
  EXPECT_EQ(pad(arange(3), {1, 1}, "replicate").to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 2, 2}));
}

// Reference: out[i][j] = x[map(i - top, H)][map(j - left, W)].
Tensor naive_pad2d(const Tensor& x, int64_t left, int64_t right, int64_t top, int64_t bottom, bool reflect) {
  const int64_t h = x.shape()[1], w = x.shape()[2];
  std::vector<double> v = contiguous(x).to_vector<double>(), out;
  auto map = [&](int64_t i, int64_t n) {
    if (!reflect) return std::clamp<int64_t>(i, 0, n - 1);
    if (i < 0) return -i;
    return i >= n ? 2 * (n - 1) - i : i;
  };
  for (int64_t c = 0; c < x.shape()[0]; ++c)
    for (int64_t i = 0; i < h + top + bottom; ++i)
      for (int64_t j = 0; j < w + left + right; ++j)
        out.push_back(v[size_t((c * h + map(i - top, h)) * w + map(j - left, w))]);
  return from_vector(out, {x.shape()[0], h + top + bottom, w + left + right});
}

TEST(PadTest, TwoDimReflectAndReplicateMatchReference) {
  Tensor x = reshape(arange(0.0, 24.0, 1.0, DType::Float64), {2, 3, 4});
  expect_allclose(pad(x, {1, 3, 2, 0}, "reflect"), naive_pad2d(x, 1, 3, 2, 0, true), 0, 0);
  expect_allclose(pad(x, {3, 0, 1, 4}, "replicate"), naive_pad2d(x, 3, 0, 1, 4, false), 0, 0);
  Tensor xt = transpose(reshape(arange(0.0, 24.0, 1.0, DType::Float64), {2, 4, 3}), 1, 2);  // strided
  expect_allclose(pad(xt, {2, 1, 1, 1}, "reflect"), naive_pad2d(contiguous(xt), 2, 1, 1, 1, true), 0, 0);
  Tensor c = pad(x, {1, 0, 0, 1}, "constant", -1);
  EXPECT_EQ(c.shape(), (Shape{2, 4, 5}));
  std::vector<double> cv = c.to_vector<double>();
  EXPECT_EQ(cv[0], -1);
  EXPECT_EQ(cv[1], 0);
  EXPECT_EQ(cv[3 * 5 + 2], -1);  // the added bottom row
}

TEST(PadTest, RejectsBadPads) {
  Tensor x = zeros({1, 2, 3});
  EXPECT_THROW(pad(x, {1}), ValueError);
  EXPECT_THROW(pad(x, {1, 1, 1, 1, 1, 1, 1, 1}), ValueError);
  EXPECT_THROW(pad(x, {3, 0}, "reflect"), ValueError);
  EXPECT_THROW(pad(x, {0, 0, 2, 0}, "reflect"), ValueError);
  EXPECT_THROW(pad(x, {-1, 0}, "replicate"), ValueError);
  EXPECT_THROW(pad(x, {-2, -2}), ValueError);
  EXPECT_THROW(pad(x, {1, 1}, "circular"), ValueError);
  EXPECT_THROW(pad(zeros({2, 0}), {1, 1}, "replicate"), ValueError);
  // Pads from a model file whose sum overflows int64 (found by tests/fuzz/onnx).
  EXPECT_THROW(pad(x, {INT64_MIN, -327678}), ValueError);
  EXPECT_THROW(pad(x, {INT64_MAX, INT64_MAX}), ValueError);
}

TEST(PadTest, GradcheckEveryMode) {
  Tensor x = rand_leaf({2, 3, 4}, 6);
  for (const char* mode : {"constant", "reflect", "replicate"})
    expect_gradcheck([mode](const std::vector<Tensor>& in) { return pad(in[0], {2, 1, 1, 2}, mode, 0.5); }, {x});
  expect_gradcheck([](const std::vector<Tensor>& in) { return pad(in[0], {-1, 2}); }, {x});
}

TEST(PadTest, Gradgradcheck) {
  Tensor x = rand_leaf({1, 3, 3}, 7);
  for (const char* mode : {"constant", "reflect", "replicate"})
    expect_gradgradcheck([mode](const std::vector<Tensor>& in) {
      Tensor y = pad(in[0], {1, 2, 2, 1}, mode);
      return mul(y, y);
    }, {x});
}

// ---- pixel_shuffle ----

// The definition as views: [N, C, rh, rw, H, W] -> [N, C, H, rh, W, rw].
Tensor shuffle_by_views(const Tensor& x, int64_t rh, int64_t rw) {
  const int64_t n = x.size(0), c = x.size(1) / (rh * rw), h = x.size(2), w = x.size(3);
  Tensor blocks = permute(reshape(x, {n, c, rh, rw, h, w}), {0, 1, 4, 2, 5, 3});
  return reshape(contiguous(blocks), {n, c, h * rh, w * rw});
}

TEST(PixelShuffleTest, KnownValuesOfOneBlock) {
  // Four channels become one 2x2 block per input pixel, in channel order row by row.
  Tensor x = from_vector(std::vector<float>{1, 2, 3, 4}, {1, 4, 1, 1});
  Tensor y = pixel_shuffle(x, 2, 2);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(PixelShuffleTest, MatchesViewCompositeForEveryFactorAndDtype) {
  struct Case { Shape x; int64_t rh, rw; };
  for (const Case& c : {Case{{2, 12, 3, 5}, 2, 3}, Case{{1, 8, 4, 4}, 2, 2}, Case{{3, 3, 2, 7}, 3, 1},
                        Case{{1, 2, 1, 1}, 1, 2}, Case{{1, 16, 40, 96}, 2, 2}}) {
    Generator gen(11);
    Tensor x = rand(c.x, DType::Float64, &gen, -1.0, 1.0);
    expect_allclose(pixel_shuffle(x, c.rh, c.rw), shuffle_by_views(x, c.rh, c.rw), 0, 0);
    // Any dtype: a permutation moves bytes, so integers and halves are exact too.
    for (DType dt : {DType::Int8, DType::Float16, DType::Float32, DType::Int64, DType::Complex128}) {
      Tensor xt = to(mul(x, 100.0), dt);
      Tensor got = pixel_shuffle(xt, c.rh, c.rw), want = shuffle_by_views(xt, c.rh, c.rw);
      ASSERT_EQ(got.dtype(), dt);
      ASSERT_EQ(got.shape(), want.shape());
      EXPECT_EQ(std::memcmp(got.data_ptr(), want.data_ptr(), size_t(got.numel() * got.itemsize())), 0)
          << dtype_name(dt) << " " << fmt::format("{}", c.x);
    }
  }
  // A non-contiguous input gives the same result as its contiguous copy.
  Generator gen(12);
  Tensor x = transpose(rand({1, 8, 5, 3}, DType::Float64, &gen, -1.0, 1.0), 2, 3);
  expect_allclose(pixel_shuffle(x, 2, 2), shuffle_by_views(contiguous(x), 2, 2), 0, 0);
}

TEST(PixelShuffleTest, RejectsBadArguments) {
  EXPECT_THROW(pixel_shuffle(zeros({4, 2, 2}), 2, 2), ShapeError);
  EXPECT_THROW(pixel_shuffle(zeros({1, 6, 2, 2}), 2, 2), ShapeError);
  EXPECT_THROW(pixel_shuffle(zeros({1, 4, 2, 2}), 0, 2), ValueError);
}

TEST(PixelShuffleTest, GradcheckAndGradgradcheck) {
  Tensor x = rand_leaf({2, 6, 2, 3}, 13);
  expect_gradcheck([](const std::vector<Tensor>& in) { return pixel_shuffle(in[0], 3, 2); }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) {
    Tensor y = pixel_shuffle(in[0], 2, 3);
    return mul(y, y);
  }, {x});
}

}  // namespace
}  // namespace skiff
