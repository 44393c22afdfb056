#include "framework/core/cpu_features.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace skiff {

static CpuFeatures detect() {
  CpuFeatures f;
  __builtin_cpu_init();
  f.sse42 = __builtin_cpu_supports("sse4.2");
  f.avx = __builtin_cpu_supports("avx");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512_vnni = __builtin_cpu_supports("avx512vnni");
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) f.f16c = (c >> 29) & 1;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512_bf16 = (a >> 5) & 1;
  char brand[49] = {};
  if (__get_cpuid_max(0x80000000, nullptr) >= 0x80000004) {
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002 + i, &a, &b, &c, &d);
      std::memcpy(brand + 16 * i, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
  }
  f.brand = brand;
  while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

CpuIsa active_isa() {
  static const CpuIsa isa = [] {
    const auto& f = cpu_features();
    CpuIsa best = (f.avx512f && f.avx512bw && f.avx512vl) ? CpuIsa::Avx512
                  : (f.avx2 && f.fma)                      ? CpuIsa::Avx2
                                                           : CpuIsa::Baseline;
    if (const char* s = std::getenv("SKIFF_CPU_ISA")) {
      std::string_view v(s);
      CpuIsa want = v == "baseline" ? CpuIsa::Baseline : v == "avx2" ? CpuIsa::Avx2 : CpuIsa::Avx512;
      if (want < best) best = want;
    }
    return best;
  }();
  return isa;
}

const char* isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Baseline: return "baseline x86-64 (SSE2)";
    case CpuIsa::Avx2: return "AVX2+FMA";
    case CpuIsa::Avx512: return "AVX-512";
  }
  return "?";
}

}  // namespace skiff
