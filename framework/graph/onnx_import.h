#pragma once
/// \file onnx_import.h
/// Reads ONNX models (IR from Debian's ONNX protobuf definitions, opsets 7-18)
/// into the graph IR.
///
/// What is checked at import, so a bad file fails here with a clear message and
/// never crashes later: the protobuf parses completely (a truncated or corrupt
/// file is an IoError naming the file), the default-domain opset is in 7..18,
/// every op is one the runtime implements (NotImplementedError naming the node
/// and op, with the closest supported op), tensor payloads have the size their
/// shape and dtype say, and the graph is in topological order.

#include <string>
#include <string_view>

#include "framework/graph/ir.h"

namespace skiff::graph {

struct OnnxImportOptions {
  /// Check every op against the registry of runnable ops (turn off to inspect
  /// models that use ops skiff cannot run, e.g. in `skiff graph show`).
  bool require_supported_ops = true;
};

/// Loads an .onnx file. External tensor data is read relative to the file's directory.
/// \throws IoError for unreadable/corrupt files, NotImplementedError for unsupported ops or
///         opsets, ValueError for malformed graphs.
Graph import_onnx(const std::string& path, const OnnxImportOptions& options = {});

/// Parses an in-memory ModelProto; `name` is used in messages, `base_dir` for external data.
Graph import_onnx_bytes(std::string_view bytes, const std::string& name, const std::string& base_dir = ".",
                        const OnnxImportOptions& options = {});

/// ONNX TensorProto.DataType code <-> DType. \throws NotImplementedError for types skiff lacks.
DType dtype_from_onnx(int onnx_type, const std::string& where);
int dtype_to_onnx(DType dtype);

}  // namespace skiff::graph
