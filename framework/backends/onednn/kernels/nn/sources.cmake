list(APPEND SKIFF_ONEDNN_KERNEL_SOURCES
  onednn/kernels/nn/conv.cpp
)
list(APPEND SKIFF_ONEDNN_KERNEL_SOURCES
  onednn/kernels/nn/fused_conv.cpp
)
