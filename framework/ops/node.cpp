#include "framework/ops/node.h"

#include <atomic>

namespace skiff::autograd {

uint64_t next_sequence_nr() {
  static std::atomic<uint64_t> seq{0};
  return seq.fetch_add(1, std::memory_order_relaxed);
}

Edge gradient_edge(const Tensor& t) {
  if (!t.requires_grad()) return {};
  auto& meta = t.impl().autograd();
  if (meta.grad_fn) return {meta.grad_fn, meta.output_nr};
  std::shared_ptr<Node> acc = meta.grad_accumulator.lock();
  if (!acc) {
    auto a = std::make_shared<AccumulateGrad>();
    a->leaf = t.impl_ptr();
    a->output_meta.push_back({t.shape(), t.dtype()});
    a->sequence_nr = UINT64_MAX;  // leaves are the last to run
    meta.grad_accumulator = a;
    acc = a;
  }
  return {acc, 0};
}

std::vector<Tensor> OpNode::apply(std::vector<Tensor>& grad_outputs) {
  SKIFF_CHECK(!released, "{}: trying to run backward through the graph a second time (its saved tensors "
              "were freed); pass retain_graph=true to the first backward", op->name);
  BackwardContext ctx(*this, grad_outputs);
  std::vector<Tensor> grads = op->backward(ctx);
  SKIFF_ASSERT(grads.size() == next_edges.size(), "backward of {} returned {} gradients for {} inputs",
               op->name, grads.size(), next_edges.size());
  return grads;
}

void OpNode::release_saved() {
  for (auto& s : saved_inputs) s = {};
  for (auto& s : saved_outputs) s = {};
  released = true;
}

}  // namespace skiff::autograd

namespace skiff {

static Tensor unpack(const autograd::SavedTensor& s, const autograd::OpNode& node, const char* what, int i) {
  SKIFF_ASSERT(s.saved, "{}: backward reads {} {} which the OpDef does not save", node.op->name, what, i);
  SKIFF_CHECK(s.data.storage()->version() == s.version,
              "{}: {} {} needed for the gradient was modified by an in-place operation after it was "
              "used; make a copy before modifying it", node.op->name, what, i);
  return s.data;
}

Tensor BackwardContext::input(int i) const {
  return unpack(node_.saved_inputs[size_t(i)], node_, "input", i);
}

Tensor BackwardContext::output(int i) const {
  const Tensor& raw = unpack(node_.saved_outputs[size_t(i)], node_, "output", i);
  if (!GradMode::enabled()) return raw;
  // Higher-order gradients flow through the saved output back into this node.
  Tensor t = detail::make_view(raw, raw.shape(), raw.strides(), raw.offset());
  auto& meta = t.impl().autograd();
  meta.requires_grad = true;
  meta.grad_fn = const_cast<autograd::OpNode&>(node_).shared_from_this();
  meta.output_nr = i;
  return t;
}

void Tensor::retain_grad() {
  SKIFF_CHECK(requires_grad(), "retain_grad: the tensor does not require grad");
  if (is_leaf()) return;  // leaves keep .grad anyway
  impl().autograd().retains_grad = true;
  grad_fn()->retained_grads[output_nr()] = impl_ptr();
}

void Tensor::register_hook(std::function<Tensor(const Tensor&)> fn) {
  SKIFF_CHECK(requires_grad(), "register_hook: the tensor does not require grad");
  if (is_leaf()) {
    impl().autograd().hooks.push_back(std::move(fn));
  } else {
    grad_fn()->pre_hooks[output_nr()].push_back(std::move(fn));
  }
}

void Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> fn) {
  SKIFF_CHECK(requires_grad() && is_leaf(),
              "register_post_accumulate_grad_hook: the tensor must be a leaf that requires grad");
  impl().autograd().post_accumulate_hooks.push_back(std::move(fn));
}

}  // namespace skiff
