list(APPEND SKIFF_OPS_SOURCES
  ops/linalg/matmul.cpp
  ops/linalg/einsum.cpp
  ops/linalg/decompositions.cpp
)
