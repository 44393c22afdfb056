# Tests of skiff_optim (one binary, GoogleTest).
skiff_add_test(skiff_optim_test
  SOURCES framework/optim/optimizer_test.cpp framework/optim/lbfgs_test.cpp framework/optim/clip_grad_test.cpp
          framework/optim/lr_scheduler_test.cpp framework/optim/ema_test.cpp
  DEPS skiff_framework)
