#pragma once
/// \file lowering.h
/// ONNX lowerings: how trace() (trace.h) turns one skiff op into ONNX nodes.
///
/// Every OpDef name has exactly one entry in the lowering registry: a lowering
/// function, or a SKIFF_NOT_EXPORTABLE mark whose reason is the error trace()
/// raises for the op. Lowerings live in framework/graph/lowerings/, one file per
/// op family of framework/ops/ (elementwise.cpp, nn.cpp, ...); the registry test
/// (tests/framework/registry_completeness_test.cpp) fails for an op with neither.
///
///   // framework/graph/lowerings/elementwise.cpp
///   void lower_leaky_relu(LoweringContext& c) {
///     c.set_output(0, c.node("LeakyRelu", {c.value(0)}, {{"alpha", float(c.attrs().get_float("negative_slope"))}}),
///                  c.flags(0));
///   }
///   SKIFF_REGISTER_LOWERING(leaky_relu, lower_leaky_relu);
///   SKIFF_NOT_EXPORTABLE(relu_backward, "relu_backward is a backward op; ...");
///
/// A lowering reads the op's tensors and attrs, emits nodes with node() and
/// constant(), and gives each output its value name and its dynamic-batch flags
/// with set_output(). An output it leaves unset cannot be used by later ops
/// (set_unavailable() says why). It throws NotImplementedError for attrs ONNX
/// cannot express.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "framework/core/registry.h"
#include "framework/graph/ir.h"
#include "framework/ops/op.h"

namespace skiff::graph {

/// How one dim of a traced value relates to the dynamic batch (TraceOptions::dynamic_batch).
enum DimKind : uint8_t {
  kStatic = 0,   ///< a fixed size
  kBatch = 1,    ///< exactly the batch size
  kDerived = 2,  ///< a size computed from the batch (B * T, ...)
};
/// One DimKind per dim of a value.
using DimFlags = std::vector<uint8_t>;

/// Broadcasts dim flags like shapes (aligned at the last dim; the most dynamic
/// kind wins) to `rank` dims.
DimFlags broadcast_flags(const std::vector<DimFlags>& in, size_t rank);

/// What a lowering sees of the op being traced and of the graph being built.
/// The tracer implements it; one context lowers one op at a time.
class LoweringContext {
 public:
  // ---- the op
  const std::string& op_name() const { return op_->name; }
  const Attrs& attrs() const { return *attrs_; }
  const std::vector<Tensor>& inputs() const { return *inputs_; }
  const Tensor& input(size_t i) const { return inputs_->at(i); }
  const std::vector<Tensor>& outputs() const { return *outputs_; }
  const Tensor& output(size_t i) const { return outputs_->at(i); }
  /// The graph value names of the inputs, in order.
  const std::vector<std::string>& values() const { return values_; }
  const std::string& value(size_t i) const { return values_.at(i); }
  /// The dynamic-batch flags of input i, and of every input.
  const DimFlags& flags(size_t i) const { return flags_.at(i); }
  const std::vector<DimFlags>& flags() const { return flags_; }

  // ---- building the graph
  /// Emits one node (named "<op_type>_<index>") and returns its output value.
  virtual std::string node(const std::string& op_type, std::vector<std::string> inputs,
                           std::map<std::string, AttrValue> attrs) = 0;
  /// Adds `t` as an initializer "const_<n>" and returns its name.
  virtual std::string constant(const Tensor& t) = 0;
  std::string const_ints(const std::vector<int64_t>& v) { return constant(from_vector(v)); }
  std::string const_scalar(double v, DType dtype) { return constant(full({}, v, dtype)); }

  // ---- results
  /// Output i is the value `value`; `flags` of the wrong length (or none) means all static.
  void set_output(size_t i, std::string value, DimFlags flags = {});
  /// Output i is not traced; an op that uses it later fails with `reason`.
  void set_unavailable(size_t i, std::string reason) { why_not_.at(i) = std::move(reason); }

 protected:
  LoweringContext() = default;
  ~LoweringContext() = default;
  /// Starts lowering one op (the tracer calls this before the lowering runs).
  void begin(const OpDef& op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
             const Attrs& attrs, std::vector<std::string> values, std::vector<DimFlags> flags);

  const OpDef* op_ = nullptr;
  const std::vector<Tensor>* inputs_ = nullptr;
  const std::vector<Tensor>* outputs_ = nullptr;
  const Attrs* attrs_ = nullptr;
  std::vector<std::string> values_;
  std::vector<DimFlags> flags_;
  std::vector<std::string> out_;      ///< per output: its value ("" = not traced)
  std::vector<DimFlags> out_flags_;   ///< per output: its flags
  std::vector<std::string> why_not_;  ///< per untraced output: the reason, if given
};

using LoweringFn = std::function<void(LoweringContext&)>;

/// A registry entry: a lowering, or (fn empty) the reason the op cannot be exported.
struct Lowering {
  LoweringFn fn;
  std::string not_exportable;
};

/// OpDef name -> lowering. Filled by the macros below.
Registry<Lowering>& lowerings();

}  // namespace skiff::graph

/// SKIFF_REGISTER_LOWERING(add, binary("Add"));  — `op` is the OpDef name.
#define SKIFF_REGISTER_LOWERING(op, fn)                                            \
  static const bool SKIFF_CONCAT(skiff_lowering_reg_, __LINE__) =                  \
      (::skiff::graph::lowerings().add(#op, ::skiff::graph::Lowering{fn, {}}), true)
/// SKIFF_NOT_EXPORTABLE(var, "'var' has no ONNX lowering ...");  — `reason` is the
/// whole NotImplementedError message after "trace: ", so it names the op.
#define SKIFF_NOT_EXPORTABLE(op, reason)                                           \
  static const bool SKIFF_CONCAT(skiff_lowering_reg_, __LINE__) =                  \
      (::skiff::graph::lowerings().add(#op, ::skiff::graph::Lowering{{}, reason}), true)
