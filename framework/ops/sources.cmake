# Op definition sources, one line per family file (kept here so families can be
# added without touching the module's CMakeLists).
set(SKIFF_OPS_SOURCES
  ops/op.cpp
  ops/node.cpp
  ops/common.cpp
  ops/elementwise/binary.cpp
  ops/elementwise/unary.cpp
  ops/shape/views.cpp
  ops/shape/join.cpp
)

# Each family keeps its own list (one owner per file keeps parallel work apart).
include(${CMAKE_CURRENT_LIST_DIR}/reduce/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/linalg/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/nn/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/index/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/loss/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/taylor/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/fft/sources.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/optim/sources.cmake)
