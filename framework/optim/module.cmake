# skiff_optim: optimizers, gradient clipping, LR schedules and weight EMA (framework/optim/).
skiff_add_module(optim
  SOURCES optim/optimizer.cpp optim/sgd.cpp optim/adam.cpp optim/rmsprop.cpp optim/adagrad.cpp
          optim/lbfgs.cpp optim/clip_grad.cpp optim/lr_scheduler.cpp optim/ema.cpp
  DEPS skiff_nn skiff_autograd)
target_link_libraries(skiff_framework INTERFACE skiff_optim)
