#pragma once
/// \file onnx_export.h
/// Writes graph IR as ONNX (a ModelProto with the default-domain opset the
/// graph declares, 13 when it has none). Initializers are stored as raw data.
/// Every exported model is run through ONNX's own checker before it is written.

#include <string>

#include "framework/graph/ir.h"

namespace skiff::graph {

struct OnnxExportOptions {
  std::string producer_name = "skiff";
  /// Run onnx::checker::check_model on the result (errors become ValueError).
  bool check = true;
};

/// Serialises to ModelProto bytes. \throws ValueError if the checker rejects the model,
/// NotImplementedError for skiff-only ops (fused ops must be exported before fusion).
std::string export_onnx_bytes(const Graph& g, const OnnxExportOptions& options = {});

/// Writes atomically (temporary file + fsync + rename). \throws IoError on write failure.
void export_onnx(const Graph& g, const std::string& path, const OnnxExportOptions& options = {});

}  // namespace skiff::graph
