list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/loss/nll_loss.cpp
  cpu/kernels/loss/ctc_loss.cpp
)
