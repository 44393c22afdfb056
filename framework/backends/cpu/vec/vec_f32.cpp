#include "framework/backends/cpu/vec/vec_f32.h"

namespace skiff::cpu {
namespace vec_baseline { extern const VecF32Kernels kTable; }
namespace vec_avx2 { extern const VecF32Kernels kTable; }
namespace vec_avx512 { extern const VecF32Kernels kTable; }

const VecF32Kernels& vec_f32_for(CpuIsa isa) {
  CpuIsa have = active_isa();
  if (isa > have) isa = have;
  switch (isa) {
    case CpuIsa::Avx512: return vec_avx512::kTable;
    case CpuIsa::Avx2: return vec_avx2::kTable;
    default: return vec_baseline::kTable;
  }
}

const VecF32Kernels& vec_f32() {
  static const VecF32Kernels& t = vec_f32_for(active_isa());
  return t;
}

}  // namespace skiff::cpu
