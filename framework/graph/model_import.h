#pragma once
/// \file model_import.h
/// One entry point for every model format skiff reads into the graph IR: ONNX
/// (`.onnx`) and TensorFlow.js graph models (`model.json` + weight shards).
/// Commands that take a model file (`skiff graph show`, `skiff bench model`, the
/// Predictor) go through here, so a new format is one more branch in this file.

#include <string>

#include "framework/graph/ir.h"

namespace skiff::graph {

struct ImportOptions {
  /// Check every op against the registry of runnable ops (turn off to inspect
  /// models with ops skiff cannot run).
  bool require_supported_ops = true;
};

/// The model file `path` names: `path` itself, or for a directory the model in it: its
/// inference.onnx (the layout of `skiff export` and PaddleOCR's *_model_dir), else its
/// only .onnx file, else its TF.js model.json.
/// \throws ValueError for a directory with none or several .onnx files.
std::string model_file(const std::string& path);

/// Imports model_file(path) by its format: a TF.js model.json, else ONNX.
/// \throws what model_file / import_onnx / import_tfjs throw.
Graph import_model(const std::string& path, const ImportOptions& options = {});

}  // namespace skiff::graph
