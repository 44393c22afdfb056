# skiff_io: safetensors, checkpoints, atomic file helpers (framework/io/).
# Below nn/optim: it only knows tensors and strings.
skiff_add_module(io
  SOURCES io/file.cpp io/safetensors.cpp io/checkpoint.cpp io/base64.cpp
  DEPS skiff_tensor
  PRIVATE_DEPS nlohmann_json::nlohmann_json)
target_link_libraries(skiff_framework INTERFACE skiff_io)
