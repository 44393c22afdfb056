# One test binary per framework module (docs/design.md, "Tests").
skiff_add_test(skiff_core_test
  SOURCES framework/core/dtype_test.cpp framework/core/shape_test.cpp
  DEPS skiff_core)
skiff_add_test(skiff_tensor_test
  SOURCES framework/tensor/tensor_test.cpp
  DEPS skiff_framework)
include(framework/ops/sources.cmake)
skiff_add_test(skiff_ops_test SOURCES ${SKIFF_OPS_TEST_SOURCES} DEPS skiff_framework)
skiff_add_test(skiff_autograd_test
  SOURCES framework/autograd/engine_test.cpp framework/autograd/higher_order_test.cpp
  DEPS skiff_framework)
