set(SKIFF_ONEDNN_KERNEL_SOURCES
  onednn/info.cpp
  onednn/engine.cpp
  onednn/blocked_layout.cpp
)

include(${CMAKE_CURRENT_LIST_DIR}/kernels/linalg/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/nn/sources.cmake)
