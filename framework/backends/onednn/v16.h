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

/// The per-ISA entry points: [[SKIFF_TARGET_AVX512]] void f_avx512(...) { body(...); }
#define SKIFF_TARGET_AVX512 gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#define SKIFF_TARGET_AVX2 gnu::target("avx2,fma")

/// The entry point compiled for `isa`.
template <class Fn>
Fn for_isa(CpuIsa isa, Fn avx512, Fn avx2, Fn baseline) {
  return isa == CpuIsa::Avx512 ? avx512 : isa == CpuIsa::Avx2 ? avx2 : baseline;
}

}  // namespace skiff::onednn
