// docs/extending.md's example op, softsign(x) = x / (1 + |x|), with its pieces in one
// file. In the tree each piece lives beside its kind: the declaration in
// framework/ops/<family>/, the kernel in framework/backends/cpu/kernels/<family>/, the
// lowering in framework/graph/lowerings/.
#include <cmath>

#include "framework/graph/lowering.h"
#include "framework/ops/node.h"
#include "framework/ops/ops.h"

namespace skiff {
namespace {

// 1. Declaration: the output's shape and dtype, and the backward written with
//    differentiable ops, so that gradients of gradients work too.
std::vector<TensorMeta> softsign_infer(const std::vector<Tensor>& in, const Attrs&) {
  const DType t = in[0].dtype();
  SKIFF_CHECK_DTYPE(t == DType::Float32 || t == DType::Float64, "softsign: needs float32 or float64, got {}",
                    dtype_name(t));
  return {{in[0].shape(), t}};
}

// d/dx x / (1 + |x|) = 1 / (1 + |x|)^2
std::vector<Tensor> softsign_backward(BackwardContext& c) {
  Tensor denominator = add(abs(c.input(0)), 1.0);
  return {div(c.grad(), mul(denominator, denominator))};
}

const OpDef kSoftsign{.name = "softsign", .infer = softsign_infer, .backward = softsign_backward, .save_inputs = 1};
SKIFF_REGISTER_OP(kSoftsign);

// 2. Kernel: float32 and float64 on the CPU. The output arrives allocated (from
//    infer) and contiguous; the input may be any view, so it is made contiguous.
template <typename T>
void softsign_loop(const Tensor& x, Tensor& y) {
  const T* in = x.data<T>();
  T* out = y.data<T>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] / (T(1) + std::abs(in[i]));
}

void softsign_cpu(const KernelContext& c) {
  Tensor x = contiguous(c.inputs[0]);
  if (x.dtype() == DType::Float32) softsign_loop<float>(x, c.outputs[0]);
  else softsign_loop<double>(x, c.outputs[0]);
}

SKIFF_REGISTER_KERNEL(softsign, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0, softsign_cpu);

// 3. ONNX lowering: the nodes the tracer writes for one call. ONNX has a Softsign
//    node, but these three are ones every runtime (skiff's importer included) runs.
void lower_softsign(graph::LoweringContext& c) {
  std::string one = c.const_scalar(1.0, c.input(0).dtype());
  std::string denominator = c.node("Add", {c.node("Abs", {c.value(0)}, {}), one}, {});
  c.set_output(0, c.node("Div", {c.value(0), denominator}, {}), c.flags(0));
}

SKIFF_REGISTER_LOWERING(softsign, lower_softsign);

}  // namespace

// The public function everything else calls.
Tensor softsign(const Tensor& x) { return call_op1(kSoftsign, {x}); }

}  // namespace skiff
