list(APPEND SKIFF_OPS_TEST_SOURCES
  framework/ops/fft/fft_test.cpp
  framework/ops/fft/complex_test.cpp
)
