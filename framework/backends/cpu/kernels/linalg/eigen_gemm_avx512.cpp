// Eigen GEMM for the avx512 ISA (compile flags in kernels/linalg/sources.cmake); see eigen_gemm.h.
#include "framework/backends/cpu/kernels/linalg/eigen_gemm.h"

#define Eigen EigenAvx512
#define SKIFF_EIGEN_GEMM_ISA avx512
#include "framework/backends/cpu/kernels/linalg/eigen_gemm_impl.inc"
