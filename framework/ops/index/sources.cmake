list(APPEND SKIFF_OPS_SOURCES
  ops/index/gather.cpp
  ops/index/one_hot.cpp
  ops/index/sort.cpp
)
