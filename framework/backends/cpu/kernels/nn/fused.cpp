// CPU kernels of the fused inference ops (framework/ops/nn/fused.h).
// Reference kernels (priority 0, float32 and float64): each op written with the skiff ops it fuses,
// so it means exactly what the unfused graph computed; they run when no fast kernel takes a call
// (oneDNN not built or disabled, float64, strided inputs).
// Fast kernels (priority 5, float32): channel_mul and upsample_nearest2d as single passes over
// memory (the reference makes a temporary per step); the oneDNN backend registers fused_conv2d,
// eltwise_chain and unblock_channels at priority 10.
// Reference: float64 loops in the op spec table (tests/framework/ops/specs/conv_pool_specs.cpp,
// fused_specs.cpp), which also runs every kernel of these ops against the reference kernels.
#include <cstring>

#include "framework/backends/cpu/loops.h"
#include "framework/core/threading.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/nn/conv.h"
#include "framework/ops/nn/fused.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff::cpu {
namespace {

using nn_detail::apply_post_step;
using nn_detail::post_chain;

Tensor contiguous_input(const Tensor& t) { return t.is_contiguous() ? t : detail::contiguous_copy(t); }

// ---- reference kernels -----------------------------------------------------------------------

void fused_conv2d_reference(const KernelContext& c) {
  NoGradGuard no_grad;
  const Tensor& w = c.inputs[1];
  const int64_t groups = c.attrs.get_int("groups");
  const bool has_bias = c.attrs.get_bool("has_bias");
  Tensor x = c.inputs[0];
  if (x.dim() == 5) x = unblock_channels(x, w.size(1) * groups);
  Tensor y = conv2d(x, w, has_bias ? std::optional<Tensor>(c.inputs[2]) : std::nullopt, c.attrs.get_ints("stride"),
                    c.attrs.get_ints("padding"), c.attrs.get_ints("dilation"), groups);
  Tensor residual = c.inputs.size() > size_t(2 + has_bias) ? c.inputs.back() : Tensor();
  if (residual.defined() && residual.dim() == 5) residual = unblock_channels(residual, w.size(0));
  for (const PostStep& s : post_chain(c.attrs, "fused_conv2d")) y = apply_post_step(s, y, residual);
  detail::copy_into(c.outputs[0], c.outputs[0].dim() == 5 ? to_channel_blocked(y) : y);
}

void eltwise_chain_reference(const KernelContext& c) {
  NoGradGuard no_grad;
  Tensor y = c.inputs[0];
  for (const PostStep& s : post_chain(c.attrs, "eltwise_chain")) y = apply_post_step(s, y, Tensor());
  detail::copy_into(c.outputs[0], y);
}

/// [N, B, H, W, 16] -> [N, B, 16, H, W] -> [N, B * 16, H, W], then the first C channels.
void unblock_channels_reference(const KernelContext& c) {
  NoGradGuard no_grad;
  const Tensor& x = c.inputs[0];
  const int64_t n = x.size(0), b = x.size(1), h = x.size(2), w = x.size(3);
  const Tensor planes = reshape(contiguous(permute(x, {0, 1, 4, 2, 3})), {n, b * kChannelBlock, h, w});
  detail::copy_into(c.outputs[0], narrow(planes, 1, 0, c.outputs[0].size(1)));
}

void channel_mul_reference(const KernelContext& c) {
  NoGradGuard no_grad;
  const Tensor m = mul(c.inputs[0], c.inputs[1]);
  detail::copy_into(c.outputs[0], c.attrs.get_bool("add_input") ? add(c.inputs[0], m) : m);
}

/// x [N, C, H, W] -> [N, C, H, 1, W, 1] -> broadcast over the factors -> [N, C, H * fh, W * fw].
void upsample_nearest2d_reference(const KernelContext& c) {
  NoGradGuard no_grad;
  const Tensor& x = c.inputs[0];
  const auto& f = c.attrs.get_ints("factors");
  const int64_t n = x.size(0), ch = x.size(1), h = x.size(2), w = x.size(3);
  const Tensor spread = expand(reshape(x, {n, ch, h, 1, w, 1}), {n, ch, h, f[0], w, f[1]});
  const Tensor y = reshape(contiguous(spread), {n, ch, h * f[0], w * f[1]});
  detail::copy_into(c.outputs[0], c.inputs.size() > 1 ? add(c.inputs[1], y) : y);
}

// ---- float32 loops -------------------------------------------------------------------------------

/// y = x * s (+ x): one pass per [H, W] plane with its channel's scale.
void channel_mul_f32(const KernelContext& c) {
  const Tensor x = contiguous_input(c.inputs[0]);
  const Tensor s = contiguous_input(c.inputs[1]);
  const bool add_input = c.attrs.get_bool("add_input");
  const int64_t n = x.size(0), ch = x.size(1), plane = x.size(2) * x.size(3), planes = n * ch;
  const bool per_sample = s.size(0) == n && n > 1;
  const float* xp = x.data<float>();
  const float* sp = s.data<float>();
  float* yp = c.outputs[0].data<float>();
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (planes * plane > 32768)
  for (int64_t i = 0; i < planes; ++i) {
    const float k = sp[per_sample ? i : i % ch];
    const float* src = xp + i * plane;
    float* dst = yp + i * plane;
    if (add_input) {
#pragma omp simd
      for (int64_t j = 0; j < plane; ++j) dst[j] = src[j] + src[j] * k;
    } else {
#pragma omp simd
      for (int64_t j = 0; j < plane; ++j) dst[j] = src[j] * k;
    }
  }
}

/// Per source row: widen it once into the first of its fh output rows (no division per element),
/// then copy it to the other rows, or add the residual to each of them.
void upsample_nearest2d_f32(const KernelContext& c) {
  const Tensor x = contiguous_input(c.inputs[0]);
  const Tensor r = c.inputs.size() > 1 ? contiguous_input(c.inputs[1]) : Tensor();
  const auto& f = c.attrs.get_ints("factors");
  const int64_t fh = f[0], fw = f[1];
  const int64_t h = x.size(2), w = x.size(3), oh = h * fh, ow = w * fw, planes = x.size(0) * x.size(1);
  const float* xp = x.data<float>();
  const float* rp = r.defined() ? r.data<float>() : nullptr;
  float* yp = c.outputs[0].data<float>();
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (planes * oh * ow > 32768)
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t sy = 0; sy < h; ++sy) {
      const float* src = xp + (p * h + sy) * w;
      float* first = yp + (p * oh + sy * fh) * ow;
      if (fw == 1) {
        std::memcpy(first, src, size_t(w) * sizeof(float));
      } else if (fw == 2) {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) first[2 * j] = first[2 * j + 1] = src[j];
      } else {
        for (int64_t j = 0; j < w; ++j)
          for (int64_t k = 0; k < fw; ++k) first[j * fw + k] = src[j];
      }
      for (int64_t row = fh - 1; row >= 0; --row) {  // row 0 last: it is the source of the others
        float* dst = first + row * ow;
        if (rp) {
          const float* res = rp + (p * oh + sy * fh + row) * ow;
#pragma omp simd
          for (int64_t j = 0; j < ow; ++j) dst[j] = res[j] + first[j];
        } else if (row > 0) {
          std::memcpy(dst, first, size_t(ow) * sizeof(float));
        }
      }
    }
  }
}

constexpr DTypeSet kF32F64 = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);

}  // namespace

SKIFF_REGISTER_KERNEL(fused_conv2d, CPU, "cpu", kF32F64, 0, fused_conv2d_reference);
SKIFF_REGISTER_KERNEL(eltwise_chain, CPU, "cpu", kF32F64, 0, eltwise_chain_reference);
SKIFF_REGISTER_KERNEL(unblock_channels, CPU, "cpu", kF32F64, 0, unblock_channels_reference);
SKIFF_REGISTER_KERNEL(channel_mul, CPU, "cpu", kF32F64, 0, channel_mul_reference);
SKIFF_REGISTER_KERNEL(upsample_nearest2d, CPU, "cpu", kF32F64, 0, upsample_nearest2d_reference);
SKIFF_REGISTER_KERNEL(channel_mul, CPU, "cpu", dtype_bit(DType::Float32), 5, channel_mul_f32);
SKIFF_REGISTER_KERNEL(upsample_nearest2d, CPU, "cpu", dtype_bit(DType::Float32), 5, upsample_nearest2d_f32);

}  // namespace skiff::cpu
