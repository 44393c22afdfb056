list(APPEND SKIFF_OPS_TEST_SOURCES
  framework/ops/nn/conv_test.cpp
  framework/ops/nn/pool_test.cpp
  framework/ops/nn/softmax_test.cpp
  framework/ops/nn/norm_test.cpp
  framework/ops/nn/dropout_test.cpp
  framework/ops/nn/resample_test.cpp
)
