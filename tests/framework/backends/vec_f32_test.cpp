#include "framework/backends/cpu/vec/vec_f32.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace skiff::cpu {

const char* table_name(CpuIsa isa) {
  return isa == CpuIsa::Avx512 ? "avx512" : isa == CpuIsa::Avx2 ? "avx2" : "baseline";
}

// Each variant runs the table compiled for its ISA, or is skipped (visibly, with the
// reason) where this machine cannot run it: vec_f32_for() lowers an ISA the CPU lacks
// (or SKIFF_CPU_ISA turned off) to one it has, which must not pass as a test of it.
class VecF32Test : public ::testing::TestWithParam<CpuIsa> {
 protected:
  void SetUp() override {
    const CpuIsa want = GetParam();
    if (want > active_isa()) {
      const auto& f = cpu_features();
      const bool cpu_has = want == CpuIsa::Avx512 ? (f.avx512f && f.avx512bw && f.avx512vl) : (f.avx2 && f.fma);
      GTEST_SKIP() << isa_name(want) << " kernels not run: "
                   << (cpu_has ? "SKIFF_CPU_ISA limits the kernels to " + std::string(isa_name(active_isa()))
                               : "this CPU (" + f.brand + ") lacks " + isa_name(want));
    }
    table_ = &vec_f32_for(want);
    ASSERT_STREQ(table_->isa, table_name(want)) << "asked for the " << isa_name(want) << " table";
  }
  const VecF32Kernels& kernels() const { return *table_; }

 private:
  const VecF32Kernels* table_ = nullptr;
};

TEST_P(VecF32Test, ExpWithinThreeUlpOfDoubleReference) {
  const VecF32Kernels& k = kernels();
  std::vector<float> x;
  for (float v = -87.0f; v < 88.5f; v += 0.0137f) x.push_back(v);
  std::vector<float> y(x.size());
  k.exp(x.data(), y.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = std::exp(double(x[i]));
    EXPECT_NEAR(y[i], ref, 3.6e-7 * ref) << k.isa << " x=" << x[i];
  }
}

TEST_P(VecF32Test, ExpSpecialValues) {
  const VecF32Kernels& k = kernels();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{0.0f, -inf, inf, std::nanf(""), 100.0f, -100.0f}, y(6);
  k.exp(x.data(), y.data(), 6);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], inf);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], inf);
  EXPECT_EQ(y[5], 0.0f);
}

TEST_P(VecF32Test, ArithmeticSigmoidReluMatchScalar) {
  const VecF32Kernels& k = kernels();
  const int n = 37;  // not a multiple of any vector width: exercises the tails
  std::vector<float> a(n), b(n), o(n);
  for (int i = 0; i < n; ++i) a[i] = float(i) * 0.5f - 9.0f, b[i] = float(i % 5) + 1.0f;
  k.add(a.data(), b.data(), o.data(), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(o[i], a[i] + b[i]);
  k.div(a.data(), b.data(), o.data(), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(o[i], a[i] / b[i]);
  k.relu(a.data(), o.data(), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(o[i], a[i] > 0 ? a[i] : 0.0f);
  k.sigmoid(a.data(), o.data(), n);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(o[i], 1.0 / (1.0 + std::exp(-double(a[i]))), 2e-7);
}

TEST_P(VecF32Test, HardswishAndItsGradientMatchScalar) {
  const VecF32Kernels& k = kernels();
  std::vector<float> x, g;
  for (float v = -5.0f; v <= 5.0f; v += 0.125f) x.push_back(v), g.push_back(0.5f - v * 0.1f);
  x.insert(x.end(), {-3.0f, 3.0f, 0.0f});  // the ends of the middle piece
  g.insert(g.end(), {2.0f, 2.0f, 2.0f});
  const int64_t n = int64_t(x.size());
  std::vector<float> y(x.size()), gx(x.size());
  k.hardswish(x.data(), y.data(), n);
  k.hardswish_backward(g.data(), x.data(), gx.data(), n);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], ref = v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0;
    const double dref = v < -3 ? 0.0 : v <= 3 ? g[i] * (2 * v + 3) / 6 : g[i];
    EXPECT_NEAR(y[i], ref, 1e-6) << k.isa << " x=" << v;
    EXPECT_NEAR(gx[i], dref, 1e-6) << k.isa << " x=" << v;
  }
}

// Batch norm's per-plane loops against float64 sums, on a length that leaves tails on every ISA.
TEST_P(VecF32Test, NormalisationLoopsMatchFloat64) {
  const VecF32Kernels& k = kernels();
  const int64_t n = 1000 + 13;
  const size_t len = static_cast<size_t>(n);
  std::vector<float> x(len), g(len), out(len);
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = 100.0f + std::sin(0.37f * float(i)), g[size_t(i)] = std::cos(0.11f * float(i));
  double sum = 0, sumsq = 0, ref_sum = 0, ref_sumsq = 0, ref_g = 0, ref_gx = 0;
  k.shifted_moments(x.data(), n, 100.0, &sum, &sumsq);
  for (float v : x) ref_sum += double(v) - 100.0, ref_sumsq += (double(v) - 100.0) * (double(v) - 100.0);
  EXPECT_NEAR(sum, ref_sum, 1e-9) << k.isa;
  EXPECT_NEAR(sumsq, ref_sumsq, 1e-9) << k.isa;
  float sg = 1.0f, sgx = -1.0f;  // added to, not overwritten
  k.grad_moments(g.data(), x.data(), n, 100.0f, &sg, &sgx);
  for (int64_t i = 0; i < n; ++i) ref_g += g[size_t(i)], ref_gx += double(g[size_t(i)]) * (double(x[size_t(i)]) - 100.0);
  EXPECT_NEAR(sg, 1.0 + ref_g, 1e-3) << k.isa;
  EXPECT_NEAR(sgx, -1.0 + ref_gx, 1e-3) << k.isa;
  k.centered_affine(x.data(), out.data(), n, 100.0f, 2.0f, 0.5f);
  for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(out[size_t(i)], (double(x[size_t(i)]) - 100.0) * 2.0 + 0.5, 2e-5) << k.isa << " i=" << i;
  k.grad_affine(g.data(), x.data(), out.data(), n, 0.5f, -0.25f, 25.0f);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_NEAR(out[size_t(i)], g[size_t(i)] * 0.5 - 0.25 * double(x[size_t(i)]) + 25.0, 2e-5) << k.isa << " i=" << i;
}

TEST_P(VecF32Test, TanhWithinFourUlpOfDoubleReference) {
  const VecF32Kernels& k = kernels();
  std::vector<float> x;
  for (float v = -12.0f; v < 12.0f; v += 0.00731f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-6f, 0.19999f, 0.2f, 0.20001f, 50.0f, -100.0f}) x.push_back(v);
  std::vector<float> y(x.size());
  k.tanh(x.data(), y.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = std::tanh(double(x[i]));
    EXPECT_NEAR(y[i], ref, 4.8e-7 * std::abs(ref) + 1e-45) << k.isa << " x=" << x[i];
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> special{inf, -inf, std::nanf("")}, out(3);
  k.tanh(special.data(), out.data(), 3);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -1.0f);
  EXPECT_TRUE(std::isnan(out[2]));
}

TEST_P(VecF32Test, GemvRowsMatchesDoubleDotProducts) {
  const VecF32Kernels& k = kernels();
  // 7 rows (a block of four and three single rows), 85 columns (tails of every width),
  // rows 93 floats apart (a strided view, as t(weight) gives when ld > k).
  const int64_t rows = 7, cols = 85, ld = 93;
  std::vector<float> w(static_cast<size_t>(rows * ld)), x(static_cast<size_t>(cols)), out(static_cast<size_t>(rows), -1.0f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 7919 % 201) - 100) / 64.0f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 104729 % 97) - 48) / 32.0f;
  k.gemv_rows(w.data(), ld, x.data(), cols, out.data(), rows);
  for (int64_t r = 0; r < rows; ++r) {
    double ref = 0, mag = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double term = double(w[size_t(r * ld + c)]) * x[size_t(c)];
      ref += term;
      mag += std::abs(term);
    }
    EXPECT_NEAR(out[size_t(r)], ref, 1e-6 * mag) << k.isa << " row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, VecF32Test, ::testing::Values(CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512),
                         [](const auto& info) { return std::string(table_name(info.param)); });

TEST(VecF32DispatchTest, ActiveTableMatchesDetectedIsa) {
  EXPECT_STREQ(vec_f32().isa, table_name(active_isa()));
  // An ISA above the active one is lowered to the active table, never above it.
  for (CpuIsa isa : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512})
    EXPECT_STREQ(vec_f32_for(isa).isa, table_name(std::min(isa, active_isa()))) << isa_name(isa);
}

}  // namespace skiff::cpu
