list(APPEND SKIFF_OPS_TEST_SOURCES
  framework/ops/index/gather_test.cpp
  framework/ops/index/sort_test.cpp
)
