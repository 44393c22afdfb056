// Pooling ops. Each pooling op is paired with a registered backward op; average pools are
// linear, so a pool and its backward are each other's adjoints and each one's gradient is the
// other. Max pooling records the argmax, after which it is linear too: the backward scatters
// gradients to the argmax positions and its own gradient gathers from them (max_pool2d_gather).
#include "framework/ops/common.h"
#include "framework/ops/nn/conv.h"
#include "framework/ops/nn/conv_params.h"

namespace skiff {
namespace {

using nn_detail::Pool2dParams;

void check_pool_input(const char* op, const Tensor& x) {
  SKIFF_CHECK_SHAPE(x.dim() == 4, "{}: expected a 4-D input [N, C, H, W], got shape {}", op, x.shape());
  SKIFF_CHECK_DTYPE(is_floating(x.dtype()), "{}: expected a floating-point tensor, got {}", op,
                    dtype_name(x.dtype()));
}

Pool2dParams check_pool(const char* op, const Shape& x, const Attrs& a) {
  Pool2dParams p = Pool2dParams::from(x, a);
  SKIFF_CHECK(p.ph <= p.kh / 2 && p.pw <= p.kw / 2,
              "{}: expected padding at most half the kernel, got padding [{}, {}] and kernel [{}, {}]", op, p.ph,
              p.pw, p.kh, p.kw);
  SKIFF_CHECK_SHAPE(p.oh > 0 && p.ow > 0,
                    "{}: expected a window that fits the padded input, got input {} with kernel [{}, {}], padding "
                    "[{}, {}], dilation [{}, {}]",
                    op, x, p.kh, p.kw, p.ph, p.pw, p.dh, p.dw);
  return p;
}

Attrs without(const Attrs& a, const char* key) {
  Attrs r;
  for (const auto& [k, v] : a.items())
    if (k != key) r.set(k, v);
  return r;
}

Attrs with_input_size(const Attrs& a, const Shape& input_size) {
  Attrs r = a;
  r.set("input_size", input_size.vec());
  return r;
}

// ---- max pooling -------------------------------------------------------------------------

std::vector<TensorMeta> max_pool2d_infer(const std::vector<Tensor>& in, const Attrs& a) {
  check_pool_input("max_pool2d", in[0]);
  Pool2dParams p = check_pool("max_pool2d", in[0].shape(), a);
  return {{p.output_shape(), in[0].dtype()}, {p.output_shape(), DType::Int64}};
}

// The values alone, for calls no gradient flows through (inference): no argmax to
// record, so kernels are free to take the windows in any order.
std::vector<TensorMeta> max_pool2d_values_infer(const std::vector<Tensor>& in, const Attrs& a) {
  check_pool_input("max_pool2d", in[0]);
  return {{check_pool("max_pool2d", in[0].shape(), a).output_shape(), in[0].dtype()}};
}
const OpDef kMaxPool2dValues{.name = "max_pool2d_values", .infer = max_pool2d_values_infer};
SKIFF_REGISTER_OP(kMaxPool2dValues);

std::vector<TensorMeta> max_pool2d_backward_infer(const std::vector<Tensor>& in, const Attrs& a) {
  SKIFF_CHECK_SHAPE(in[0].shape() == in[1].shape() && in[1].dtype() == DType::Int64,
                    "max_pool2d_backward: expected grad_out and int64 indices of one shape, got {} and {} ({})",
                    in[0].shape(), in[1].shape(), dtype_name(in[1].dtype()));
  return {{Shape(a.get_ints("input_size")), in[0].dtype()}};
}

std::vector<TensorMeta> max_pool2d_gather_infer(const std::vector<Tensor>& in, const Attrs&) {
  SKIFF_CHECK_SHAPE(in[0].dim() == 4 && in[1].dim() == 4 && in[0].size(0) == in[1].size(0) &&
                        in[0].size(1) == in[1].size(1) && in[1].dtype() == DType::Int64,
                    "max_pool2d_gather: expected x [N, C, H, W] and int64 indices [N, C, Ho, Wo], got {} and {} ({})",
                    in[0].shape(), in[1].shape(), dtype_name(in[1].dtype()));
  return {{in[1].shape(), in[0].dtype()}};
}

std::vector<Tensor> max_pool2d_backward_fn(BackwardContext& ctx);
std::vector<Tensor> max_pool2d_backward_backward(BackwardContext& ctx);
std::vector<Tensor> max_pool2d_gather_backward(BackwardContext& ctx);

const OpDef kMaxPool2d{.name = "max_pool2d", .infer = max_pool2d_infer, .backward = max_pool2d_backward_fn,
                       .save_outputs = 0b10};
const OpDef kMaxPool2dBackward{.name = "max_pool2d_backward", .infer = max_pool2d_backward_infer,
                               .backward = max_pool2d_backward_backward, .save_inputs = 0b10};
const OpDef kMaxPool2dGather{.name = "max_pool2d_gather", .infer = max_pool2d_gather_infer,
                             .backward = max_pool2d_gather_backward, .save_inputs = 0b10};
SKIFF_REGISTER_OP(kMaxPool2d);
SKIFF_REGISTER_OP(kMaxPool2dBackward);
SKIFF_REGISTER_OP(kMaxPool2dGather);

Tensor scatter_to_argmax(const Tensor& grad, const Tensor& indices, const Shape& input_size) {
  return call_op1(kMaxPool2dBackward, {grad, indices}, {{"input_size", input_size.vec()}});
}

std::vector<Tensor> max_pool2d_backward_fn(BackwardContext& ctx) {
  return {scatter_to_argmax(ctx.grad(0), ctx.output(1), ctx.input_meta(0).shape)};
}
std::vector<Tensor> max_pool2d_backward_backward(BackwardContext& ctx) {
  if (!ctx.needs_grad(0)) return {Tensor(), Tensor()};
  return {call_op1(kMaxPool2dGather, {ctx.grad(), ctx.input(1)}), Tensor()};
}
std::vector<Tensor> max_pool2d_gather_backward(BackwardContext& ctx) {
  if (!ctx.needs_grad(0)) return {Tensor(), Tensor()};
  return {scatter_to_argmax(ctx.grad(), ctx.input(1), ctx.input_meta(0).shape), Tensor()};
}

// ---- average pooling ---------------------------------------------------------------------

std::vector<TensorMeta> avg_pool2d_infer(const std::vector<Tensor>& in, const Attrs& a) {
  check_pool_input("avg_pool2d", in[0]);
  return {{check_pool("avg_pool2d", in[0].shape(), a).output_shape(), in[0].dtype()}};
}

std::vector<TensorMeta> avg_pool2d_backward_infer(const std::vector<Tensor>& in, const Attrs& a) {
  Shape input_size(a.get_ints("input_size"));
  Pool2dParams p = check_pool("avg_pool2d_backward", input_size, a);
  SKIFF_CHECK_SHAPE(in[0].shape() == p.output_shape(), "avg_pool2d_backward: expected grad_out {}, got {}",
                    p.output_shape(), in[0].shape());
  return {{input_size, in[0].dtype()}};
}

std::vector<Tensor> avg_pool2d_backward_fn(BackwardContext& ctx);
std::vector<Tensor> avg_pool2d_backward_backward(BackwardContext& ctx);

const OpDef kAvgPool2d{.name = "avg_pool2d", .infer = avg_pool2d_infer, .backward = avg_pool2d_backward_fn};
const OpDef kAvgPool2dBackward{.name = "avg_pool2d_backward", .infer = avg_pool2d_backward_infer,
                               .backward = avg_pool2d_backward_backward};
SKIFF_REGISTER_OP(kAvgPool2d);
SKIFF_REGISTER_OP(kAvgPool2dBackward);

std::vector<Tensor> avg_pool2d_backward_fn(BackwardContext& ctx) {
  return {call_op1(kAvgPool2dBackward, {ctx.grad()}, with_input_size(ctx.attrs(), ctx.input_meta(0).shape))};
}
std::vector<Tensor> avg_pool2d_backward_backward(BackwardContext& ctx) {
  return {call_op1(kAvgPool2d, {ctx.grad()}, without(ctx.attrs(), "input_size"))};
}

// ---- adaptive average pooling ------------------------------------------------------------

std::vector<TensorMeta> adaptive_avg_pool2d_infer(const std::vector<Tensor>& in, const Attrs& a) {
  check_pool_input("adaptive_avg_pool2d", in[0]);
  SKIFF_CHECK_SHAPE(in[0].size(2) > 0 && in[0].size(3) > 0,
                    "adaptive_avg_pool2d: expected a non-empty [H, W] plane, got shape {}", in[0].shape());
  const auto& os = a.get_ints("output_size");
  return {{{in[0].size(0), in[0].size(1), os[0], os[1]}, in[0].dtype()}};
}

std::vector<TensorMeta> adaptive_avg_pool2d_backward_infer(const std::vector<Tensor>& in, const Attrs& a) {
  Shape input_size(a.get_ints("input_size"));
  const auto& os = a.get_ints("output_size");
  SKIFF_CHECK_SHAPE(in[0].shape() == Shape({input_size[0], input_size[1], os[0], os[1]}),
                    "adaptive_avg_pool2d_backward: expected grad_out [{}, {}, {}, {}], got {}", input_size[0],
                    input_size[1], os[0], os[1], in[0].shape());
  return {{input_size, in[0].dtype()}};
}

std::vector<Tensor> adaptive_avg_pool2d_backward_fn(BackwardContext& ctx);
std::vector<Tensor> adaptive_avg_pool2d_backward_backward(BackwardContext& ctx);

const OpDef kAdaptiveAvgPool2d{.name = "adaptive_avg_pool2d", .infer = adaptive_avg_pool2d_infer,
                               .backward = adaptive_avg_pool2d_backward_fn};
const OpDef kAdaptiveAvgPool2dBackward{.name = "adaptive_avg_pool2d_backward",
                                       .infer = adaptive_avg_pool2d_backward_infer,
                                       .backward = adaptive_avg_pool2d_backward_backward};
SKIFF_REGISTER_OP(kAdaptiveAvgPool2d);
SKIFF_REGISTER_OP(kAdaptiveAvgPool2dBackward);

std::vector<Tensor> adaptive_avg_pool2d_backward_fn(BackwardContext& ctx) {
  return {call_op1(kAdaptiveAvgPool2dBackward, {ctx.grad()}, with_input_size(ctx.attrs(), ctx.input_meta(0).shape))};
}
std::vector<Tensor> adaptive_avg_pool2d_backward_backward(BackwardContext& ctx) {
  return {call_op1(kAdaptiveAvgPool2d, {ctx.grad()}, without(ctx.attrs(), "input_size"))};
}

Attrs pool_attrs(const char* op, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                 const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode) {
  std::vector<int64_t> k = nn_detail::pair_param(op, "kernel", kernel, 1);
  return Attrs{{"kernel", k},
               {"stride", stride.empty() ? k : nn_detail::pair_param(op, "stride", stride, 1)},
               {"padding", nn_detail::pair_param(op, "padding", padding, 0)},
               {"dilation", nn_detail::pair_param(op, "dilation", dilation, 1)},
               {"ceil_mode", ceil_mode}};
}

}  // namespace

MaxPoolResult max_pool2d_with_indices(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                                      std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
  auto out = call_op(kMaxPool2d, {x}, pool_attrs("max_pool2d", kernel, stride, padding, dilation, ceil_mode));
  return {out[0], out[1]};
}

Tensor max_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
  if (GradMode::enabled() && x.requires_grad())
    return max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode).values;
  return call_op1(kMaxPool2dValues, {x}, pool_attrs("max_pool2d", kernel, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, bool ceil_mode, bool count_include_pad) {
  Attrs a = pool_attrs("avg_pool2d", kernel, stride, padding, {1}, ceil_mode);
  a.set("count_include_pad", count_include_pad);
  return call_op1(kAvgPool2d, {x}, a);
}

Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> output_size) {
  return call_op1(kAdaptiveAvgPool2d, {x},
                  {{"output_size", nn_detail::pair_param("adaptive_avg_pool2d", "output_size", output_size, 1)}});
}

Tensor global_avg_pool2d(const Tensor& x) { return adaptive_avg_pool2d(x, {1, 1}); }

}  // namespace skiff
