# Tests of skiff_graph and skiff_engine: IR, ONNX import/export, op semantics, passes.
skiff_add_test(skiff_graph_test
  SOURCES framework/graph/import_export_test.cpp framework/graph/ops_test.cpp framework/graph/passes_test.cpp
          framework/graph/fusion_test.cpp framework/graph/predictor_threads_test.cpp
          framework/graph/tfjs_import_test.cpp
  DEPS skiff_framework)
# The real PP-OCRv4 models vs ONNX Runtime fixtures; pulls the models from the zoo on first use.
skiff_add_test(skiff_graph_models_test
  SOURCES framework/graph/models_test.cpp
  DEPS skiff_framework
  LABELS network)
target_compile_definitions(skiff_graph_models_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# Training side of the graph: tracing eager modules to IR, GraphModule (graphs as trainable modules).
skiff_add_test(skiff_graph_train_test
  SOURCES framework/graph/trace_test.cpp framework/graph/graph_module_test.cpp
  DEPS skiff_framework)
# GraphModule on the real PP-OCR classifier; pulls the model from the zoo on first use.
skiff_add_test(skiff_graph_train_models_test
  SOURCES framework/graph/graph_module_models_test.cpp
  DEPS skiff_framework
  LABELS network)
# The real NanoDet TF.js model vs TensorFlow.js CPU-backend fixtures; pulls the model from the zoo.
skiff_add_test(skiff_graph_tfjs_models_test
  SOURCES framework/graph/tfjs_models_test.cpp
  DEPS skiff_framework
  LABELS network)
target_compile_definitions(skiff_graph_tfjs_models_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
