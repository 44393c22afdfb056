list(APPEND SKIFF_OPS_SOURCES
  ops/loss/pointwise_losses.cpp
  ops/loss/nll_loss.cpp
  ops/loss/cross_entropy.cpp
  ops/loss/ctc_loss.cpp
)
