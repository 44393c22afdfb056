list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/linalg/matmul.cpp
  cpu/kernels/linalg/decompositions.cpp
)
