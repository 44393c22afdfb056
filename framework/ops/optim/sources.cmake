list(APPEND SKIFF_OPS_SOURCES
  ops/optim/adam_step.cpp
  ops/optim/sgd_rmsprop_adagrad_steps.cpp
)
