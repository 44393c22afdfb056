#include "framework/graph/model_import.h"

#include "framework/graph/onnx_import.h"
#include "framework/graph/tfjs_import.h"

namespace skiff::graph {

Graph import_model(const std::string& path, const ImportOptions& options) {
  if (is_tfjs_model(path)) return import_tfjs(path, TfjsImportOptions{options.require_supported_ops});
  return import_onnx(path, OnnxImportOptions{options.require_supported_ops});
}

}  // namespace skiff::graph
