list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/optim/adam.cpp
)
