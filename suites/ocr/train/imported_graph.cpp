#include "suites/ocr/train/imported_graph.h"

#include "framework/core/error.h"
#include "framework/graph/onnx_import.h"

namespace skiff::ocr {

std::shared_ptr<graph::GraphModule> import_trainable_graph(const std::string& onnx_path, const std::string& what) {
  graph::Graph g = graph::import_onnx(onnx_path);
  SKIFF_CHECK(g.inputs.size() == 1 && g.outputs.size() == 1, "{}: a {} has one input and one output, this graph has {} and {}",
              onnx_path, what, g.inputs.size(), g.outputs.size());
  return std::make_shared<graph::GraphModule>(std::move(g));
}

}  // namespace skiff::ocr
