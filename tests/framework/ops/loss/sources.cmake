list(APPEND SKIFF_OPS_TEST_SOURCES
  framework/ops/loss/pointwise_losses_test.cpp
  framework/ops/loss/nll_loss_test.cpp
  framework/ops/loss/ctc_loss_test.cpp
)
