list(APPEND SKIFF_OPS_TEST_SOURCES
  framework/ops/taylor/taylor_test.cpp
)
