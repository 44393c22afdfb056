set(SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/elementwise/binary.cpp
  cpu/kernels/elementwise/unary.cpp
  cpu/kernels/shape/copy.cpp
)

include(${CMAKE_CURRENT_LIST_DIR}/kernels/reduce/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/linalg/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/nn/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/index/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/loss/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/taylor/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/fft/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/optim/sources.cmake)

# Float32 vector kernels compiled once per ISA and picked at run time.
list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/vec/vec_f32.cpp
  cpu/vec/vec_f32_baseline.cpp
  cpu/vec/vec_f32_avx2.cpp
  cpu/vec/vec_f32_avx512.cpp
)
# -fno-trapping-math lets the compiler if-convert the selects in exp/tanh/sigmoid
# (with a division in the loop it otherwise keeps branches and does not vectorize);
# skiff never relies on floating-point exception flags.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/vec/vec_f32_baseline.cpp PROPERTIES COMPILE_OPTIONS "-fno-trapping-math")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/vec/vec_f32_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-fno-trapping-math")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/vec/vec_f32_avx512.cpp PROPERTIES
  COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-mprefer-vector-width=512;-fno-trapping-math")
