#pragma once
/// \file tfjs_import.h
/// Reads TensorFlow.js graph models (`model.json` + its weight shards) into the
/// graph IR, beside the ONNX importer, so the passes, the Predictor, `skiff graph
/// show`, ONNX export and GraphModule work on them unchanged.
///
/// The JSON holds a TensorFlow GraphDef (`modelTopology.node`: name, op, inputs,
/// attributes) and a weights manifest (groups of shard files; each weight's name,
/// shape, dtype and optional quantization). Const nodes become initializers,
/// dequantized on load (float16, and uint8/uint16 affine: q * scale + min).
/// TensorFlow ops are translated into ONNX ops: NHWC convolutions and pools
/// become Transpose -> NCHW op -> Transpose, HWIO filters become OIHW
/// initializers, and `graph::optimize` (sink_transposes) removes the transposes
/// that cancel. Shape arithmetic on constants (SparseToDense, ...) is folded here.
///
/// Checked at import, with messages naming the file, node and op: the JSON's
/// structure, every op being one the importer translates (with the closest
/// one), every Const having its weight, the shards holding the bytes the
/// manifest says, and the graph having no cycle.

#include <string>

#include "framework/graph/ir.h"

namespace skiff::graph {

struct TfjsImportOptions {
  /// Check every translated op against the registry of runnable ops.
  bool require_supported_ops = true;
};

/// Loads a TF.js graph model from its model.json; shards are read relative to its directory.
/// \throws IoError for unreadable files, ValueError for malformed JSON, manifests or graphs,
///         NotImplementedError for ops or attributes the importer does not translate.
Graph import_tfjs(const std::string& model_json_path, const TfjsImportOptions& options = {});

/// True when `path` is a JSON file whose top level declares a TF.js graph model
/// (`"format": "graph-model"` or a `modelTopology` with `node`). Reads at most the file.
bool is_tfjs_model(const std::string& path);

/// The ops import_tfjs translates, sorted (for messages and docs).
std::vector<std::string> tfjs_supported_ops();

}  // namespace skiff::graph
