#pragma once
/// \file trace.h
/// Tracing: turns eager skiff code (an nn::Module's forward) into graph IR that
/// export_onnx() writes as a valid ONNX model.
///
/// How. trace() installs an op observer (framework/ops/op.h, detail::OpObserver)
/// on the calling thread and runs the forward once on the example inputs under
/// NoGradGuard. Every op call_op() runs is reported once, at the outermost level,
/// and lowered to one or a few ONNX nodes (opset 17) by its OpDef name and attrs.
///
/// Lowerings live in framework/graph/lowerings/, one file per op family of
/// framework/ops/, registered with SKIFF_REGISTER_LOWERING (lowering.h). To add
/// one, write a function of a LoweringContext there and register it under the
/// op's name; an op ONNX cannot express gets SKIFF_NOT_EXPORTABLE with the reason
/// instead. Every OpDef needs one of the two (tests/framework/registry_completeness_test.cpp).
///
/// Composite functions (gelu, silu, hardswish, mean, eval-mode batch_norm,
/// linear, ...) are written with primitive ops in skiff, so they trace as the
/// primitives they run (gelu -> Mul/Erf/Add; eval batch_norm -> a per-channel
/// scale and shift computed from the running statistics). An op marked not
/// exportable raises NotImplementedError with its reason.
///
/// Values. A tensor the traced code uses that no traced op produced is
///   - a graph input when it is one of example_inputs,
///   - an initializer named by its module path ("backbone.conv1.weight") when it
///     is one of the module's parameters or buffers,
///   - otherwise a constant captured by value (an initializer "const_<n>"): the
///     scalars of `x * 0.5`, masks built with zeros()/arange(), ...
/// Like every tracer, this records one execution: Python-style control flow on
/// tensor values is frozen, and tensors built from a size read in C++
/// (`zeros({x.size(0), ...})`) are captured as constants of that size.
///
/// Dynamic batch. With TraceOptions::dynamic_batch, dim 0 of every input is the
/// symbol "batch". The tracer follows which dims derive from it and writes
/// shape-carrying attributes so the graph runs at any batch size: a Reshape
/// target copies such a dim (0) or infers it (-1), Slice ends on it become "to
/// the end", Expand keeps it (1). A reshape that would need two batch-derived
/// dims to be inferred raises NotImplementedError.

#include <functional>
#include <string>
#include <vector>

#include "framework/graph/ir.h"

namespace skiff::nn {
class Module;
}

namespace skiff::graph {

struct TraceOptions {
  /// Mark dim 0 of every input as the dynamic symbol `batch_symbol`.
  bool dynamic_batch = false;
  std::string batch_symbol = "batch";
  /// Graph input/output names; default "input"/"output" for one, "input_<i>" otherwise.
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  /// Default-domain opset of the result (LayerNormalization needs 17).
  int64_t opset = 17;
  std::string graph_name = "skiff_trace";
};

/// The traced computation: inputs -> outputs.
using TraceFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Traces `fn` run on `example_inputs`; tensors of `module` (parameters and
/// buffers) become initializers named by their dotted path. `module` may be null.
/// The module's mode is not changed: call eval() first (dropout and batch-statistics
/// batch_norm do not trace). \throws NotImplementedError for an op without an ONNX
/// lowering, ValueError for a forward that uses a tensor the trace cannot account for.
Graph trace(nn::Module* module, const TraceFn& fn, const std::vector<Tensor>& example_inputs,
            const TraceOptions& options = {});

/// Traces `module.forward(example_inputs[0])` (exactly one input).
Graph trace(nn::Module& module, const std::vector<Tensor>& example_inputs, const TraceOptions& options = {});

}  // namespace skiff::graph
