// Eigen GEMM for the avx2 ISA (compile flags in kernels/linalg/sources.cmake); see eigen_gemm.h.
#include "framework/backends/cpu/kernels/linalg/eigen_gemm.h"

#define Eigen EigenAvx2
#define SKIFF_EIGEN_GEMM_ISA avx2
#include "framework/backends/cpu/kernels/linalg/eigen_gemm_impl.inc"
