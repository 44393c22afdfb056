#pragma once
/// \file printer.h
/// Human-readable and JSON summaries of a graph (`skiff graph show`).

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "framework/graph/ir.h"

namespace skiff::graph {

struct GraphSummary {
  std::string name, producer;
  int64_t opset = 0;
  std::vector<ValueInfo> inputs, outputs;
  size_t num_nodes = 0;
  std::map<std::string, int> op_histogram;
  /// Elements of every constant tensor: initializers and Constant nodes' values
  /// (exporters such as paddle2onnx store weights as Constant nodes).
  int64_t parameters = 0;
};

GraphSummary summarize(const Graph& g);
/// "x: float32 [?, 3, ?, ?]" style shape text; dynamic dims print their symbol or "?".
std::string format_value(const ValueInfo& v);
std::string format_summary(const GraphSummary& s);
nlohmann::json summary_json(const GraphSummary& s);

/// One line per node in graph order: "op_type 'name'  inputs -> outputs  attr=value ...". Tensor
/// attributes print as their shape; a skipped optional input prints as "-".
std::string format_nodes(const Graph& g);
/// The same as a JSON array of {name, op_type, inputs, outputs, attrs} (tensors as their shape).
nlohmann::json nodes_json(const Graph& g);

}  // namespace skiff::graph
