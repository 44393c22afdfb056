list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/index/gather.cpp
  cpu/kernels/index/sort.cpp
)
