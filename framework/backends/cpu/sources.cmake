set(SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/elementwise/binary.cpp
  cpu/kernels/elementwise/unary.cpp
  cpu/kernels/reduce/sum.cpp
  cpu/kernels/shape/copy.cpp
)
