#pragma once
/// \file v16.h
/// Sixteen floats, one nChw16c channel block, as a GCC vector: one AVX-512 register, two
/// AVX2 ones, four SSE ones. For the backend's hand-written loops (blocked_layout.cpp,
/// kernels/nn/blocked_conv.cpp), whose bodies are always_inline helpers compiled once per
/// ISA inside [[gnu::target]] entry points. Internal to the backend.
///
/// A 64-byte vector never crosses a call boundary there, so GCC's -Wpsabi note about its
/// ABI without AVX-512 does not apply; including files switch it off.

#include <cstdint>
#include <cstring>

#include "framework/core/cpu_features.h"

#pragma GCC diagnostic ignored "-Wpsabi"

namespace skiff::onednn {

typedef float v16 __attribute__((vector_size(64)));
typedef int32_t m16 __attribute__((vector_size(64)));  ///< lane masks and shuffle indices

[[gnu::always_inline]] inline v16 load(const float* p) {
  v16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, v16 v) { std::memcpy(p, &v, sizeof v); }
// x - 0 is x for every float (signed zeros too), so this is a plain broadcast.
[[gnu::always_inline]] inline v16 splat(float x) { return x - v16{}; }

/// exp of each lane, the vec table's method (framework/backends/cpu/vec): 2^n * e^r with
/// n = round(x / ln 2) by the 1.5 * 2^23 trick and a degree-7 polynomial for e^r; within
/// ~2 ulp of std::exp. Overflow gives +inf, below -87.34 gives 0, NaN stays NaN.
[[gnu::always_inline]] inline v16 exp16(v16 x) {
  const float hi = 88.7228390f, lo = -87.3365448f;
  v16 xc = x > hi ? splat(hi) : x;
  xc = xc < lo ? splat(lo) : xc;
  const v16 shifted = xc * 1.44269504089f + 12582912.0f;
  const v16 n = shifted - 12582912.0f;
  const m16 ni = (m16)shifted - 0x4B400000;  // n as an integer (the cast keeps the bits)
  v16 r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  v16 p = splat(1.98412698e-4f);
  p = p * r + 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n as two factors so n = 128 and n = -126 stay normal.
  const m16 half = ni >> 1;
  const m16 e1 = (half + 127) << 23, e2 = (ni - half + 127) << 23;
  v16 y = p * (v16)e1 * (v16)e2;
  y = x > hi ? splat(__builtin_inff()) : y;
  y = x < lo ? splat(0.f) : y;
  return x != x ? x : y;
}

/// The per-ISA entry points: [[SKIFF_TARGET_AVX512]] void f_avx512(...) { body(...); }
#define SKIFF_TARGET_AVX512 gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#define SKIFF_TARGET_AVX2 gnu::target("avx2,fma")

/// The entry point compiled for `isa`.
template <class Fn>
Fn for_isa(CpuIsa isa, Fn avx512, Fn avx2, Fn baseline) {
  return isa == CpuIsa::Avx512 ? avx512 : isa == CpuIsa::Avx2 ? avx2 : baseline;
}

}  // namespace skiff::onednn
