list(APPEND SKIFF_OPS_SOURCES
  ops/reduce/sum.cpp
)
