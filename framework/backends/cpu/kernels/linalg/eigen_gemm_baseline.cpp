// Eigen GEMM for the baseline ISA (compile flags in kernels/linalg/sources.cmake); see eigen_gemm.h.
#include "framework/backends/cpu/kernels/linalg/eigen_gemm.h"

#define Eigen EigenBaseline
#define SKIFF_EIGEN_GEMM_ISA baseline
#include "framework/backends/cpu/kernels/linalg/eigen_gemm_impl.inc"
