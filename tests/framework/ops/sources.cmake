set(SKIFF_OPS_TEST_SOURCES
  framework/ops/elementwise_test.cpp
  framework/ops/views_test.cpp
  framework/ops/reduce_test.cpp
)
