list(APPEND SKIFF_ONEDNN_KERNEL_SOURCES
  onednn/kernels/linalg/matmul.cpp
)
