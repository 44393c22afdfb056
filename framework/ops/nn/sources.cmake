list(APPEND SKIFF_OPS_SOURCES
  ops/nn/conv.cpp
  ops/nn/pool.cpp
  ops/nn/softmax.cpp
  ops/nn/norm.cpp
  ops/nn/dropout.cpp
  ops/nn/interpolate.cpp
  ops/nn/pad.cpp
  ops/nn/pixel_shuffle.cpp
  ops/nn/fused.cpp
)
