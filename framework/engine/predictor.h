#pragma once
/// \file predictor.h
/// The inference engine: load a model once, run it many times.
///
/// A Predictor optimises its graph (framework/graph/passes.h), then compiles it
/// into a plan: a flat list of steps with each op's implementation resolved,
/// its attributes parsed by the op's optional prepare hook (immutable state per
/// step), and every value given an integer slot, so running does no name look-ups. A step
/// releases the values it was the last reader of, so intermediate buffers go
/// back to the caching allocator as soon as they are dead and are reused by
/// later steps (memory planned by liveness; no allocation from the system in
/// steady state).
///
/// The plan is immutable after construction: `run()` may be called from many
/// threads at once; each call has its own slots. Inputs may have any size in
/// the dims the model declares dynamic (batch, height, width); shape-specific
/// kernels (oneDNN primitives) are cached per shape by the backends.

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/graph/ir.h"
#include "framework/graph/op_registry.h"

namespace skiff::engine {

/// Time spent per step during one run (`skiff bench model --profile`).
struct RunProfile {
  /// One step of the run, in execution order.
  struct Step {
    double ms = 0;
    std::string op_type;
    std::string what;  ///< the node and its input -> output shapes
  };
  std::vector<Step> nodes;
};

struct PredictorOptions {
  /// 0: run the graph as imported; 1: constant folding and clean-up; 2: also fusions.
  int optimization_level = 2;
};

class Predictor {
 public:
  /// Imports an ONNX file or a TF.js model.json. \throws like graph::import_model.
  explicit Predictor(const std::string& model_path, PredictorOptions options = {});
  explicit Predictor(graph::Graph graph, PredictorOptions options = {});

  const std::vector<graph::ValueInfo>& inputs() const { return graph_.inputs; }
  const std::vector<graph::ValueInfo>& outputs() const { return graph_.outputs; }
  /// The optimised graph the plan runs.
  const graph::Graph& graph() const { return graph_; }
  /// Number of steps (nodes) in the plan.
  size_t num_steps() const { return steps_.size(); }

  /// Runs with inputs in the order of inputs(); returns outputs in the order of outputs().
  /// \throws ShapeError/TypeError naming the input when an input does not match its declaration.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  /// Same, timing every step into `profile` (adds to what it holds).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunProfile* profile) const;
  /// Runs with named inputs; returns every graph output by name.
  std::unordered_map<std::string, Tensor> run(const std::unordered_map<std::string, Tensor>& inputs) const;

 private:
  struct Step {
    const graph::Node* node;
    graph::GraphOpFn fn;
    std::shared_ptr<const void> prepared;  // the op's prepare() result for this node, or null
    std::vector<int> inputs;    // slot per node input, -1 for an omitted one
    std::vector<int> outputs;   // slot per node output, -1 for an unnamed one
    std::vector<int> release;   // slots whose last reader is this step
  };

  void compile();
  void check_input(size_t i, const Tensor& t) const;

  std::string source_;  // file name for messages
  graph::Graph graph_;
  std::vector<Step> steps_;
  int num_slots_ = 0;
  std::vector<std::pair<int, Tensor>> constants_;  // initializer slots
  std::vector<int> input_slots_;
  std::vector<int> output_slots_;
};

}  // namespace skiff::engine
