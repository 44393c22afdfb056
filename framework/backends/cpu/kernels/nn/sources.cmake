list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/nn/conv.cpp
  cpu/kernels/nn/pool.cpp
  cpu/kernels/nn/softmax.cpp
  cpu/kernels/nn/norm.cpp
  cpu/kernels/nn/dropout.cpp
  cpu/kernels/nn/interpolate.cpp
  cpu/kernels/nn/pad.cpp
  cpu/kernels/nn/pixel_shuffle.cpp
  cpu/kernels/nn/fused.cpp
)
