# The op spec table (issue 18 item 7): the table and its reference helpers, one file
# of specs per op family, the generic suites that run over them, and the test that
# the table covers every registered op.
set(SKIFF_OP_SPEC_TEST_SOURCES
  framework/ops/specs/op_spec.cpp
  framework/ops/specs/reference.cpp
  framework/ops/specs/spec_suites_test.cpp
  framework/ops/specs/unary_specs.cpp
  framework/ops/specs/binary_specs.cpp
  framework/ops/specs/reduce_specs.cpp
  framework/ops/specs/shape_specs.cpp
  framework/ops/specs/linalg_specs.cpp
  framework/ops/specs/conv_pool_specs.cpp
  framework/ops/specs/norm_specs.cpp
  framework/ops/specs/resample_specs.cpp
  framework/ops/specs/index_specs.cpp
  framework/ops/specs/loss_specs.cpp
  framework/ops/specs/fft_specs.cpp
  framework/ops/specs/taylor_optim_specs.cpp
  framework/ops/specs/fused_specs.cpp
  framework/ops/specs/completeness_test.cpp
)
