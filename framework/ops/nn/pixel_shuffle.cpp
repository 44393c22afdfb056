// pixel_shuffle: channels into spatial blocks, [N, C*rh*rw, H, W] -> [N, C, H*rh, W*rw] with
// out[n, c, h*rh + i, w*rw + j] = in[n, (c*rh + i)*rw + j, h, w] (PyTorch's F.pixel_shuffle,
// one factor per axis). A permutation of elements, so its backward is the inverse permutation,
// written with views here so that gradients of any order flow.
#include "framework/ops/common.h"
#include "framework/ops/nn/resample.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

std::vector<TensorMeta> pixel_shuffle_infer(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  const int64_t rh = a.get_int("rh"), rw = a.get_int("rw");
  return {{Shape{x.size(0), x.size(1) / (rh * rw), x.size(2) * rh, x.size(3) * rw}, x.dtype()}};
}

// The inverse: [N, C, H*rh, W*rw] -> [N, C*rh*rw, H, W].
std::vector<Tensor> pixel_shuffle_backward(BackwardContext& ctx) {
  const Tensor& g = ctx.grad();
  const int64_t rh = ctx.attrs().get_int("rh"), rw = ctx.attrs().get_int("rw");
  const int64_t n = g.size(0), c = g.size(1), h = g.size(2) / rh, w = g.size(3) / rw;
  Tensor blocks = permute(reshape(g, {n, c, h, rh, w, rw}), {0, 1, 3, 5, 2, 4});
  return {reshape(contiguous(blocks), {n, c * rh * rw, h, w})};
}

const OpDef kPixelShuffle{.name = "pixel_shuffle", .infer = pixel_shuffle_infer, .backward = pixel_shuffle_backward};
SKIFF_REGISTER_OP(kPixelShuffle);

}  // namespace

Tensor pixel_shuffle(const Tensor& x, int64_t rh, int64_t rw) {
  SKIFF_CHECK_SHAPE(x.dim() == 4, "pixel_shuffle: expected a 4-D input [N, C, H, W], got shape {}", x.shape());
  SKIFF_CHECK(rh > 0 && rw > 0, "pixel_shuffle: expected positive factors, got {} x {}", rh, rw);
  SKIFF_CHECK_SHAPE(x.size(1) % (rh * rw) == 0,
                    "pixel_shuffle: expected channels divisible by {} x {} = {}, got shape {}", rh, rw, rh * rw,
                    x.shape());
  return call_op1(kPixelShuffle, {x}, Attrs{{"rh", rh}, {"rw", rw}});
}

}  // namespace skiff
