set(SKIFF_OPS_TEST_SOURCES
  framework/ops/elementwise_test.cpp
  framework/ops/views_test.cpp
  framework/ops/kernel_dispatch_test.cpp
)

include(${CMAKE_CURRENT_LIST_DIR}/reduce/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/linalg/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/nn/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/index/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/loss/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/taylor/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/fft/sources.cmake)
