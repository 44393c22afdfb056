list(APPEND SKIFF_OPS_SOURCES
  ops/taylor/taylor.cpp
)
