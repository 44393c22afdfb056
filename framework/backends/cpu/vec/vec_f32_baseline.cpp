// Float32 kernels for the baseline ISA (compile flags set in backends/CMakeLists.txt).
#include <cstring>

#include "framework/backends/cpu/vec/vec_f32.h"

namespace skiff::cpu::vec_baseline {
#define SKIFF_VEC_ISA_NAME "baseline"
#include "framework/backends/cpu/vec/vec_f32_impl.inc"
}  // namespace skiff::cpu::vec_baseline
