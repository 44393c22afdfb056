#pragma once
/// \file graph_module.h
/// GraphModule: a graph (an imported ONNX model, a traced module) as a trainable
/// nn::Module.
///
/// The graph's weights become the module's tensors; forward() runs the nodes in
/// order through the registered graph ops (op_registry.h). Those are written with
/// skiff's differentiable functional ops, so with grad mode on (the default;
/// forward() does not change it) the autograd graph reaches the parameters and
/// optimizers, state_dict(), safetensors checkpoints and to_graph() work as for
/// any module.
///
/// Which tensors are trainable. The weight-like tensors of a graph are its
/// initializers and the `value` tensors of its Constant nodes (PaddleOCR's ONNX
/// files keep every weight in a Constant node). Such a tensor becomes a
/// **parameter** when all of these hold:
///   - its dtype is floating point,
///   - it has at least `min_parameter_elements` elements (default 2: scalars such
///     as an epsilon, a Clip bound or hardsigmoid's 1/6 stay fixed),
///   - no node reads it at a non-trainable slot: BatchNormalization's running
///     mean/variance (inputs 3, 4), Resize/Upsample roi/scales/sizes, Clip's
///     bounds, Pad's pads/value, and the shape/axes/index inputs of shape ops.
/// Every other floating one becomes a **buffer**: saved by state_dict(), never
/// trained. Integer and bool tensors (shapes, axes, indices) are part of the
/// graph's structure and stay in the graph, outside state_dict().
/// BatchNormalization therefore trains its scale and bias and keeps its running
/// statistics (it always normalises with them: fine-tuning runs it in eval form).
///
/// Names. A tensor is registered under its value name split at '.', each part
/// sanitised to [A-Za-z0-9_] ("conv2d_0.w_0" -> child "conv2d_0", parameter "w_0"),
/// so state_dict() keys equal the graph's names wherever those are dotted paths of
/// such parts; a traced module's GraphModule has the module's own state_dict keys.
/// A name that collides after sanitising gets a numeric suffix. tensor_names()
/// maps graph value names to state_dict keys.

#include <map>
#include <string>
#include <vector>

#include "framework/graph/ir.h"
#include "framework/nn/module.h"

namespace skiff::graph {

struct GraphModuleOptions {
  /// Floating tensors with fewer elements stay buffers (see the file comment).
  int64_t min_parameter_elements = 2;
};

class GraphModule : public nn::Module {
 public:
  /// \throws ValueError for a malformed graph, NotImplementedError for an op the
  /// runtime does not implement.
  explicit GraphModule(Graph graph, GraphModuleOptions options = {});

  std::string type_name() const override { return "GraphModule"; }

  /// Runs the graph with inputs in the order of graph().inputs; returns its outputs in order.
  /// \throws ValueError for a wrong number of inputs; errors of a node name the node.
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs);
  /// One input, one output.
  Tensor forward(const Tensor& x) override;
  using nn::Module::operator();

  /// The graph as given (its weights are the module's tensors at construction).
  const Graph& graph() const { return graph_; }
  /// The graph with the module's current tensor values written back into its
  /// initializers and Constant nodes (copies, detached), ready for export_onnx().
  Graph to_graph() const;
  /// Graph value name -> state_dict key, for every tensor the module holds.
  const std::map<std::string, std::string>& tensor_names() const { return keys_; }

 private:
  struct Slot {
    std::string value;  // graph value name
    Tensor* tensor;     // the registered handle (parameter or buffer)
    int node;           // the Constant node holding it, -1 for an initializer
  };

  Tensor& register_tensor(const std::string& value, const Tensor& t, bool trainable);

  Graph graph_;
  std::vector<Slot> slots_;
  std::vector<bool> skip_node_;   // Constant nodes whose tensor the module holds
  std::vector<std::vector<std::string>> release_after_;  // values whose last reader is node i
  std::map<std::string, std::string> keys_;
  std::map<std::string, nn::Module*> scopes_;  // dotted prefix -> child module
};

}  // namespace skiff::graph
