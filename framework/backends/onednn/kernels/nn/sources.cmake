list(APPEND SKIFF_ONEDNN_KERNEL_SOURCES
  onednn/kernels/nn/conv.cpp
  onednn/kernels/nn/depthwise_nchw.cpp
)
list(APPEND SKIFF_ONEDNN_KERNEL_SOURCES
  onednn/kernels/nn/fused_conv.cpp
  onednn/kernels/nn/blocked_conv.cpp
  onednn/kernels/nn/blocked_pool.cpp
)
