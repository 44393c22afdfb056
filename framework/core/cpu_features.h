#pragma once
/// \file cpu_features.h
/// Run-time CPU feature detection. skiff is compiled for baseline x86-64; hot
/// loops are compiled in several ISA variants and picked here at run time.

#include <string>

namespace skiff {

enum class CpuIsa { Baseline, Avx2, Avx512 };

struct CpuFeatures {
  bool sse42 = false, avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512_vnni = false, avx512_bf16 = false;
  std::string brand;
};

const CpuFeatures& cpu_features();
/// The ISA the vectorized kernels use on this machine. SKIFF_CPU_ISA=baseline|avx2|avx512
/// lowers it (it can never raise it above what the CPU supports).
CpuIsa active_isa();
const char* isa_name(CpuIsa isa);

}  // namespace skiff
