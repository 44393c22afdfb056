#pragma once
/// \file node.h
/// The recorded autograd graph: nodes created by call_op() and consumed by the
/// engine in framework/autograd/engine.h.
///
/// A node is one recorded op application. Its `next_edges[i]` says where the
/// gradient for input i goes: the node that produced that input (and which of its
/// outputs it was), or the AccumulateGrad node of a leaf. Saved tensors follow
/// PyTorch's rule to avoid reference cycles: saved *outputs* are stored without
/// their grad_fn and re-linked to this node when unpacked during backward.

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "framework/ops/op.h"

namespace skiff::autograd {

struct Node;

struct Edge {
  std::shared_ptr<Node> fn;
  int input_nr = 0;  ///< which output slot of `fn` this gradient feeds
  bool valid() const { return fn != nullptr; }
};

/// A tensor kept for backward, with the storage version at save time.
struct SavedTensor {
  Tensor data;
  uint32_t version = 0;
  bool is_output = false;
  int output_nr = 0;
  bool saved = false;
};

using GradHook = std::function<Tensor(const Tensor&)>;

struct Node : std::enable_shared_from_this<Node> {
  virtual ~Node() = default;
  virtual std::string name() const = 0;
  /// Gradients for each input, given gradients for each output (undefined entries are
  /// materialized as zeros for differentiable outputs before this is called).
  virtual std::vector<Tensor> apply(std::vector<Tensor>& grad_outputs) = 0;
  /// Drops saved tensors (after a backward pass that does not retain the graph).
  virtual void release_saved() {}

  std::vector<Edge> next_edges;        ///< one per input
  std::vector<TensorMeta> output_meta; ///< one per output
  uint64_t sequence_nr = 0;            ///< creation order; later nodes run first
  std::map<int, std::vector<GradHook>> pre_hooks;           ///< per output slot
  std::map<int, std::weak_ptr<TensorImpl>> retained_grads;  ///< retain_grad() targets
};

/// Recorded application of an OpDef.
struct OpNode final : Node {
  const OpDef* op = nullptr;
  Attrs attrs;
  std::vector<SavedTensor> saved_inputs;
  std::vector<SavedTensor> saved_outputs;
  std::vector<TensorMeta> input_meta;
  bool released = false;

  std::string name() const override { return op->name; }
  std::vector<Tensor> apply(std::vector<Tensor>& grad_outputs) override;
  void release_saved() override;
};

/// Sink node of a leaf tensor: the engine adds the incoming gradient to leaf.grad.
struct AccumulateGrad final : Node {
  std::shared_ptr<TensorImpl> leaf;
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor>& grad_outputs) override { return {}; }
};

/// Where the gradient of `t` should be sent (invalid edge if t does not require grad).
Edge gradient_edge(const Tensor& t);
uint64_t next_sequence_nr();

}  // namespace skiff::autograd

namespace skiff {

/// What a backward formula sees. Everything returned here may be used in further
/// differentiable computation (higher-order gradients).
class BackwardContext {
 public:
  BackwardContext(autograd::OpNode& node, std::vector<Tensor>& grads) : node_(node), grads_(grads) {}
  const Attrs& attrs() const { return node_.attrs; }
  /// Saved value of input i (must be in OpDef::save_inputs).
  Tensor input(int i) const;
  /// Saved value of output i (must be in OpDef::save_outputs), linked to this node.
  Tensor output(int i) const;
  /// Gradient w.r.t. output i.
  const Tensor& grad(int i = 0) const { return grads_[size_t(i)]; }
  /// Whether input i needs a gradient (skip work when it does not).
  bool needs_grad(int i) const { return node_.next_edges[size_t(i)].valid(); }
  const TensorMeta& input_meta(int i) const { return node_.input_meta[size_t(i)]; }
  int num_inputs() const { return int(node_.input_meta.size()); }
  const std::string& op_name() const { return node_.op->name; }

 private:
  autograd::OpNode& node_;
  std::vector<Tensor>& grads_;
};

}  // namespace skiff
