# skiff_nn: Module, containers, initializers and layers (framework/nn/).
skiff_add_module(nn
  SOURCES nn/module.cpp nn/containers.cpp nn/init.cpp nn/linear.cpp nn/conv.cpp nn/norm.cpp nn/embedding.cpp
          nn/attention.cpp nn/transformer.cpp nn/rnn.cpp nn/rotary.cpp nn/lora.cpp
  DEPS skiff_ops
  PRIVATE_DEPS skiff_io nlohmann_json::nlohmann_json)  # lora.cpp: adapter files
target_link_libraries(skiff_framework INTERFACE skiff_nn)
