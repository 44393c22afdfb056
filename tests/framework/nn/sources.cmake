# Tests of skiff_nn (one binary, GoogleTest).
skiff_add_test(skiff_nn_test
  SOURCES framework/nn/module_test.cpp framework/nn/init_test.cpp framework/nn/layers_test.cpp
          framework/nn/attention_test.cpp framework/nn/attention_reference_test.cpp
          framework/nn/rnn_test.cpp framework/nn/rotary_test.cpp framework/nn/lora_test.cpp
  DEPS skiff_framework)
