// Float32 kernels for the avx512 ISA (compile flags set in backends/CMakeLists.txt).
#include <cstring>

#include "framework/backends/cpu/vec/vec_f32.h"

namespace skiff::cpu::vec_avx512 {
#define SKIFF_VEC_ISA_NAME "avx512"
#include "framework/backends/cpu/vec/vec_f32_impl.inc"
}  // namespace skiff::cpu::vec_avx512
