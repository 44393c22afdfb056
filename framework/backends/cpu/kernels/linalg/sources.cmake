list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/linalg/matmul.cpp
  cpu/kernels/linalg/decompositions.cpp
  cpu/kernels/linalg/eigen_gemm_baseline.cpp
  cpu/kernels/linalg/eigen_gemm_avx2.cpp
  cpu/kernels/linalg/eigen_gemm_avx512.cpp
)
# Eigen GEMM once per ISA, picked at run time by matmul.cpp (same scheme as cpu/vec/). GCC 12 warns
# falsely inside its own AVX intrinsic headers (self-initialized __Y) when Eigen is built with them.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/eigen_gemm_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-Wno-maybe-uninitialized")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/eigen_gemm_avx512.cpp PROPERTIES
  COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-Wno-maybe-uninitialized")
