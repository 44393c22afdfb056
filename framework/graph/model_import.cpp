#include "framework/graph/model_import.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "framework/core/error.h"
#include "framework/graph/onnx_import.h"
#include "framework/graph/tfjs_import.h"

namespace skiff::graph {
namespace {

namespace fs = std::filesystem;

std::string model_file_in(const fs::path& dir) {
  if (fs::is_regular_file(dir / "inference.onnx")) return (dir / "inference.onnx").string();
  std::vector<std::string> onnx;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".onnx") onnx.push_back(e.path().filename().string());
  std::sort(onnx.begin(), onnx.end());
  SKIFF_CHECK(onnx.size() <= 1, "model '{}' is a directory with several .onnx files ({}): name one of them",
              dir.string(), fmt::join(onnx, ", "));
  if (onnx.size() == 1) return (dir / onnx[0]).string();
  if (fs::is_regular_file(dir / "model.json") && is_tfjs_model((dir / "model.json").string()))
    return (dir / "model.json").string();
  SKIFF_THROW(ValueError, "model '{}' is a directory without a model in it (inference.onnx, one .onnx file or a "
              "TF.js model.json)", dir.string());
}

}  // namespace

std::string model_file(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? model_file_in(path) : path;
}

Graph import_model(const std::string& path, const ImportOptions& options) {
  const std::string file = model_file(path);
  if (is_tfjs_model(file)) return import_tfjs(file, TfjsImportOptions{options.require_supported_ops});
  return import_onnx(file, OnnxImportOptions{options.require_supported_ops});
}

}  // namespace skiff::graph
