# Op definition sources, one line per family file (kept here so families can be
# added without touching the module's CMakeLists).
set(SKIFF_OPS_SOURCES
  ops/op.cpp
  ops/node.cpp
  ops/common.cpp
  ops/elementwise/binary.cpp
  ops/elementwise/unary.cpp
  ops/reduce/sum.cpp
  ops/shape/views.cpp
  ops/shape/join.cpp
)
