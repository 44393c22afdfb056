list(APPEND SKIFF_OPS_TEST_SOURCES
  framework/ops/linalg/matmul_test.cpp
  framework/ops/linalg/einsum_test.cpp
  framework/ops/linalg/decompositions_test.cpp
)
