# Tests of skiff_optim (one binary, GoogleTest).
skiff_add_test(skiff_optim_test
  SOURCES framework/optim/optimizer_test.cpp framework/optim/lbfgs_test.cpp framework/optim/clip_grad_test.cpp
          framework/optim/lr_scheduler_test.cpp framework/optim/ema_test.cpp
  DEPS skiff_framework)
# Training that must converge (issue 3, "Proof that it learns"): the digits CNN on the real
# scikit-learn data and an L-BFGS function fit. Part of the default run (about 10 s on 2 cores);
# `ctest -LE training` skips it.
skiff_add_test(skiff_train_test
  SOURCES framework/optim/digits_cnn_test.cpp framework/optim/lbfgs_fit_test.cpp
  DEPS skiff_framework
  LABELS training)
