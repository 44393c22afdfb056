list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/reduce/sum.cpp
  cpu/kernels/reduce/extrema.cpp
  cpu/kernels/reduce/moments.cpp
  cpu/kernels/reduce/prod.cpp
)
