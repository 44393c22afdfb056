list(APPEND SKIFF_CPU_KERNEL_SOURCES
  cpu/kernels/optim/adam.cpp
  cpu/kernels/optim/sgd_rmsprop_adagrad.cpp
)
