#pragma once
/// \file op_registry.h
/// The runnable graph ops: one function per ONNX op type, written with skiff's
/// functional ops. Because every skiff op is differentiable, the same functions
/// run an imported graph for inference (under NoGradGuard) and for training
/// (GraphModule), and constant folding runs them at optimisation time.

#include <memory>
#include <string>
#include <vector>

#include "framework/graph/ir.h"

namespace skiff::graph {

/// What an op implementation sees: its node (attributes), its inputs (an
/// undefined Tensor for an omitted optional input) and the model's opset.
/// `prepared` is what the op's `prepare` hook built from this node ahead of
/// time (the Predictor does this once per step), or null: an op must then
/// derive the same state from the node itself (constant folding, run_node).
struct OpContext {
  const Node& node;
  const std::vector<Tensor>& inputs;
  int64_t opset;
  const void* prepared = nullptr;

  size_t num_inputs() const { return inputs.size(); }
  bool has(size_t i) const { return i < inputs.size() && inputs[i].defined(); }
  /// \throws ValueError naming the node when input i is missing.
  const Tensor& input(size_t i) const;
  /// An integer tensor input (shape, axes, pads) as a vector.
  std::vector<int64_t> ints(size_t i) const;
  /// A scalar input as a double.
  double scalar(size_t i) const;
};

using GraphOpFn = std::vector<Tensor> (*)(const OpContext&);
/// Parses a node's attributes (and looks up kernels) once, before any run. The
/// result is immutable and shared by concurrent runs; it must not depend on
/// input shapes or values.
using GraphOpPrepareFn = std::shared_ptr<const void> (*)(const Node& node, int64_t opset);

struct GraphOp {
  std::string op_type;
  GraphOpFn run = nullptr;
  /// False for ops whose result must not be computed ahead of time (random ops).
  bool foldable = true;
  /// Optional: per-node state handed to run() as OpContext::prepared.
  GraphOpPrepareFn prepare = nullptr;
};

/// Registers (or replaces) the implementation of an op type.
void register_graph_op(GraphOp op);
/// The implementation of op_type, or nullptr.
const GraphOp* find_graph_op(const std::string& op_type);
/// The registered op type closest to op_type by edit distance ("" if none is close).
std::string closest_graph_op(const std::string& op_type);
/// Every registered op type, sorted.
std::vector<std::string> graph_op_names();

/// Runs a node through its registered implementation, adding the node to any
/// error's context. Checks the number of outputs.
std::vector<Tensor> run_node(const Node& node, const std::vector<Tensor>& inputs, int64_t opset);

namespace detail {
struct GraphOpRegistrar {
  GraphOpRegistrar(const char* type, GraphOpFn fn, bool foldable = true) { register_graph_op({type, fn, foldable}); }
  GraphOpRegistrar(const char* type, GraphOpFn fn, GraphOpPrepareFn prepare) {
    register_graph_op({type, fn, true, prepare});
  }
};
}  // namespace detail

}  // namespace skiff::graph

#define SKIFF_GRAPH_OP_CONCAT_(a, b) a##b
#define SKIFF_GRAPH_OP_CONCAT(a, b) SKIFF_GRAPH_OP_CONCAT_(a, b)
/// SKIFF_REGISTER_GRAPH_OP("Relu", relu_op);
/// SKIFF_REGISTER_GRAPH_OP("skiff.FusedConv", fused_conv_op, prepare_fused_conv);
#define SKIFF_REGISTER_GRAPH_OP(type, ...)                                                   \
  static ::skiff::graph::detail::GraphOpRegistrar SKIFF_GRAPH_OP_CONCAT(graph_op_registrar_, \
                                                                        __LINE__)(type, __VA_ARGS__)
