list(APPEND SKIFF_OPS_TEST_SOURCES
  framework/ops/reduce/sum_test.cpp
  framework/ops/reduce/extrema_test.cpp
  framework/ops/reduce/moments_test.cpp
  framework/ops/reduce/prod_test.cpp
)
