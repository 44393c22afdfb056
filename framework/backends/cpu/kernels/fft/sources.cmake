list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/fft/complex.cpp
  cpu/kernels/fft/fft.cpp
)
