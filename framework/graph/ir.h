#pragma once
/// \file ir.h
/// The graph IR: what the ONNX importer produces, the passes rewrite, the
/// exporter writes and the Predictor runs.
///
/// A Graph is a list of Nodes in topological order. Values are named (as in
/// ONNX): a node's inputs and outputs are value names; "" stands for an omitted
/// optional input. Constant tensors live in `initializers`, keyed by value name.
/// Shapes may be partly symbolic (dynamic batch, height, width).

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::graph {

/// One dimension of a value's shape: a known size, or a symbol ("batch",
/// "height") when it is only known at run time.
struct Dim {
  int64_t value = -1;  ///< >= 0 when known
  std::string symbol;  ///< name of a dynamic dim ("" = anonymous unknown)

  bool known() const { return value >= 0; }
  static Dim fixed(int64_t v) { return Dim{v, {}}; }
  static Dim dynamic(std::string s = {}) { return Dim{-1, std::move(s)}; }
  bool operator==(const Dim&) const = default;
};

/// A graph input, output or intermediate value's declared type.
struct ValueInfo {
  std::string name;
  DType dtype = DType::Float32;
  bool has_shape = false;  ///< false: rank unknown
  std::vector<Dim> shape;
};

/// The attribute value kinds ONNX uses (sub-graphs are not supported).
using AttrValue = std::variant<int64_t, float, std::string, Tensor, std::vector<int64_t>, std::vector<float>,
                               std::vector<std::string>>;

struct Node {
  std::string name;     ///< unique within the graph (the importer names unnamed nodes)
  std::string op_type;  ///< ONNX op type ("Conv") or a skiff fused op ("skiff.FusedConv")
  std::string domain;   ///< "" for the default ONNX domain
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, AttrValue> attrs;

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(const std::string& key, std::vector<float> fallback = {}) const;
  /// \throws ValueError naming the node if the attribute is missing or not a tensor.
  const Tensor& attr_tensor(const std::string& key) const;
  /// "node 'conv_3' (Conv)" for messages.
  std::string describe() const;
};

class Graph {
 public:
  std::string name;
  std::string producer;       ///< who wrote the file ("paddle2onnx 1.0")
  int64_t opset_version = 0;  ///< default-domain opset
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<Node> nodes;
  std::unordered_map<std::string, Tensor> initializers;
  /// Declared types of intermediate values (optional; from the file or shape inference).
  std::unordered_map<std::string, ValueInfo> value_info;

  bool is_initializer(const std::string& value) const { return initializers.count(value) != 0; }
  bool is_graph_input(const std::string& value) const;
  bool is_graph_output(const std::string& value) const;
  /// Number of elements over all initializers.
  int64_t parameter_count() const;
  /// Uses of each value as a node input or graph output.
  std::unordered_map<std::string, int> use_counts() const;
  /// Index of the node producing each value.
  std::unordered_map<std::string, size_t> producers() const;
  /// Checks the graph is well formed: every input is defined before use (graph
  /// input, initializer or earlier node output), values are produced once, and
  /// every graph output is produced. \throws ValueError naming the first problem.
  void validate() const;
  /// Makes node names unique and non-empty ("<op_type>_<index>").
  void name_nodes();
};

}  // namespace skiff::graph
