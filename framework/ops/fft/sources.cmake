list(APPEND SKIFF_OPS_SOURCES
  ops/fft/complex.cpp
  ops/fft/fft.cpp
)
