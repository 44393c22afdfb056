list(APPEND SKIFF_OPS_SOURCES
  ops/fft/complex.cpp
)
