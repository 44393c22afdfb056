# skiff_graph: the graph IR, the ONNX importer, runnable graph ops and passes (framework/graph/).
# ONNXConfig links protobuf::libprotobuf without finding it.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
skiff_add_module(graph
  SOURCES graph/ir.cpp graph/op_registry.cpp graph/onnx_import.cpp graph/tfjs_import.cpp graph/model_import.cpp graph/printer.cpp graph/passes.cpp graph/transpose_sinking.cpp graph/onnx_export.cpp
          graph/ops/elementwise.cpp graph/ops/nn.cpp graph/ops/padding.cpp graph/ops/tensor_ops.cpp
          graph/fusion.cpp graph/ops/fused.cpp
          graph/trace.cpp graph/graph_module.cpp
          graph/lowering.cpp graph/lowerings/elementwise.cpp graph/lowerings/fft.cpp graph/lowerings/index.cpp
          graph/lowerings/linalg.cpp graph/lowerings/loss.cpp graph/lowerings/optim.cpp graph/lowerings/nn.cpp graph/lowerings/reduce.cpp
          graph/lowerings/shape.cpp graph/lowerings/taylor.cpp
  DEPS skiff_ops skiff_nn skiff_io nlohmann_json::nlohmann_json
  PRIVATE_DEPS onnx onnx_proto)
target_link_libraries(skiff_framework INTERFACE skiff_graph)
