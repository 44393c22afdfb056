list(APPEND SKIFF_OPS_TEST_SOURCES
  framework/ops/reduce/sum_test.cpp
)
