list(APPEND SKIFF_OPS_SOURCES
  ops/reduce/sum.cpp
  ops/reduce/extrema.cpp
  ops/reduce/moments.cpp
  ops/reduce/prod.cpp
)
