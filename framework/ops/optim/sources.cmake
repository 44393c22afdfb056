list(APPEND SKIFF_OPS_SOURCES
  ops/optim/adam_step.cpp
)
