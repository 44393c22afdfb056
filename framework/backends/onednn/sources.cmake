set(SKIFF_ONEDNN_KERNEL_SOURCES
  onednn/info.cpp
)
