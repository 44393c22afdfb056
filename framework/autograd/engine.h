#pragma once
/// \file engine.h
/// Reverse-mode differentiation over the graph recorded by call_op().
///
/// backward() accumulates into the .grad of leaves; grad() returns gradients of
/// chosen inputs without touching .grad. With create_graph the backward pass is
/// itself recorded, so the returned gradients can be differentiated again (to any
/// order). The graph's saved tensors are freed after a pass unless retain_graph.

#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::autograd {

/// Backpropagates from `roots`. grad_roots defaults to ones for scalar roots.
/// \throws ValueError if a root does not require grad or is non-scalar without a gradient.
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots = {},
              bool retain_graph = false, bool create_graph = false);

/// Gradients of `outputs` w.r.t. `inputs` (like torch.autograd.grad). retain_graph
/// defaults to create_graph. An input that does not influence the outputs gets an
/// undefined tensor when allow_unused, else a ValueError.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool create_graph = false,
                         bool allow_unused = false, int retain_graph = -1);

}  // namespace skiff::autograd

namespace skiff {
/// Shorthand for autograd::backward({t}).
inline void backward(const Tensor& t, const Tensor& grad = {}, bool retain_graph = false) {
  autograd::backward({t}, grad.defined() ? std::vector<Tensor>{grad} : std::vector<Tensor>{}, retain_graph);
}
}  // namespace skiff
