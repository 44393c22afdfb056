set(SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/elementwise/binary.cpp
  cpu/kernels/elementwise/unary.cpp
  cpu/kernels/shape/copy.cpp
)

include(${CMAKE_CURRENT_LIST_DIR}/kernels/reduce/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/linalg/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/nn/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/index/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kernels/loss/sources.cmake)
