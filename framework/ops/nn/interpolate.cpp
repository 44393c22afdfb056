// interpolate (nearest, linear/bilinear) and its adjoint interpolate_backward.
// Both run on [N, C, H, W] (3-D inputs get H = 1) and share one attribute set:
// in_size, out_size, scales (0 = not given), mode, align_corners. Each op's
// backward is the other op, since resampling is linear in the input.
#include <cmath>

#include "framework/ops/common.h"
#include "framework/ops/nn/resample.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

Shape with_spatial(const Tensor& x, const std::vector<int64_t>& spatial) {
  return {x.shape()[0], x.shape()[1], spatial[0], spatial[1]};
}

const OpDef& interpolate_op();
const OpDef& interpolate_backward_op();

std::vector<TensorMeta> interpolate_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{with_spatial(in[0], a.get_ints("out_size")), in[0].dtype()}};
}
std::vector<Tensor> interpolate_grad(BackwardContext& ctx) {
  return {call_op1(interpolate_backward_op(), {ctx.grad()}, ctx.attrs())};
}
const OpDef kInterpolate{.name = "interpolate", .infer = interpolate_infer, .backward = interpolate_grad};
SKIFF_REGISTER_OP(kInterpolate);

std::vector<TensorMeta> interpolate_backward_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{with_spatial(in[0], a.get_ints("in_size")), in[0].dtype()}};
}
std::vector<Tensor> interpolate_backward_grad(BackwardContext& ctx) {
  return {call_op1(interpolate_op(), {ctx.grad()}, ctx.attrs())};
}
const OpDef kInterpolateBackward{.name = "interpolate_backward", .infer = interpolate_backward_infer,
                                 .backward = interpolate_backward_grad};
SKIFF_REGISTER_OP(kInterpolateBackward);

const OpDef& interpolate_op() { return kInterpolate; }
const OpDef& interpolate_backward_op() { return kInterpolateBackward; }

}  // namespace

Tensor interpolate(const Tensor& x, const InterpolateOptions& o) {
  SKIFF_CHECK_SHAPE(x.dim() == 3 || x.dim() == 4, "interpolate: expected input [N, C, L] or [N, C, H, W], got shape {}",
                    x.shape());
  SKIFF_CHECK_DTYPE(is_floating(x.dtype()), "interpolate: expected a float tensor, got {}", dtype_name(x.dtype()));
  const int64_t spatial = x.dim() - 2;
  const std::string& mode = o.mode;
  const bool linear = mode == "bilinear" || mode == "linear";
  SKIFF_CHECK(mode == "nearest" || linear, "interpolate: expected mode nearest, linear or bilinear, got '{}'", mode);
  SKIFF_CHECK(mode != "bilinear" || spatial == 2, "interpolate: mode 'bilinear' expects 4-D input, got shape {}",
              x.shape());
  SKIFF_CHECK(mode != "linear" || spatial == 1, "interpolate: mode 'linear' expects 3-D input, got shape {}",
              x.shape());
  SKIFF_CHECK(linear || !o.align_corners,
              "interpolate: align_corners can only be set with mode linear or bilinear, got mode '{}'", mode);
  SKIFF_CHECK(o.size.empty() != o.scale_factor.empty(),
              "interpolate: expected exactly one of size and scale_factor, got {}",
              o.size.empty() ? "neither" : "both");

  std::vector<int64_t> in_size(x.shape().begin() + 2, x.shape().end()), out_size;
  std::vector<double> scales(size_t(spatial), 0.0);
  if (!o.size.empty()) {
    SKIFF_CHECK_SHAPE(int64_t(o.size.size()) == spatial, "interpolate: expected size with {} values for input {}, "
                      "got {}", spatial, x.shape(), o.size);
    for (int64_t s : o.size) SKIFF_CHECK(s > 0, "interpolate: expected positive output sizes, got {}", o.size);
    out_size = o.size;
  } else {
    const auto& f = o.scale_factor;
    SKIFF_CHECK_SHAPE(f.size() == 1 || int64_t(f.size()) == spatial,
                      "interpolate: expected 1 or {} scale factors for input {}, got {}", spatial, x.shape(), f);
    for (int64_t d = 0; d < spatial; ++d) {
      double s = f.size() == 1 ? f[0] : f[size_t(d)];
      SKIFF_CHECK(s > 0 && std::isfinite(s), "interpolate: expected positive scale factors, got {}", f);
      scales[size_t(d)] = s;
      out_size.push_back(int64_t(std::floor(double(in_size[size_t(d)]) * s)));
      SKIFF_CHECK(out_size.back() > 0, "interpolate: scale factor {} gives an empty output for input {}", s,
                  x.shape());
    }
  }
  if (spatial == 1) {  // [N, C, L] runs as [N, C, 1, L]
    in_size.insert(in_size.begin(), 1);
    out_size.insert(out_size.begin(), 1);
    scales.insert(scales.begin(), 0.0);
  }
  Attrs attrs{{"in_size", in_size}, {"out_size", out_size}, {"scales", scales},
              {"mode", std::string(linear ? "linear" : "nearest")}, {"align_corners", o.align_corners}};
  if (spatial == 2) return call_op1(kInterpolate, {x}, attrs);
  Tensor x4 = unsqueeze(x, 2);
  return squeeze(call_op1(kInterpolate, {x4}, attrs), 2);
}

}  // namespace skiff
