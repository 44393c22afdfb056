#pragma once
/// \file imported_graph.h
/// An exported OCR model (ONNX) as a trainable graph::GraphModule: what
/// ImportedRecognizer and ImportedDetector are built on.
#include <memory>
#include <string>

#include "framework/graph/graph_module.h"

namespace skiff::ocr {

/// Imports `onnx_path` and checks it has one input and one output.
/// `what` names the model in messages ("recognizer", "text detector").
/// \throws IoError / ValueError for a missing or malformed file.
std::shared_ptr<graph::GraphModule> import_trainable_graph(const std::string& onnx_path, const std::string& what);

}  // namespace skiff::ocr
