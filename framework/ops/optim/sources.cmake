list(APPEND SKIFF_OPS_SOURCES
  ops/optim/optimizer_steps.cpp
)
