// CPU kernels of activation_jet and its backward: one pass over the points,
// the activation's derivatives computed once per (point, unit) and reused for
// every direction. Work is split over points only, so results do not depend on
// the thread count.
// Layout: inputs are made contiguous by the kernel (z1 may be [M, 1, H]); outputs contiguous.
// Reference: activation_jet_reference (plain ops), tests/framework/ops/taylor/taylor_test.cpp.
#include <omp.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "framework/backends/cpu/loops.h"
#include "framework/backends/cpu/vec/vec_f32.h"
#include "framework/ops/shape/shape_ops.h"
#include "framework/ops/taylor/jet_formulas.h"

namespace skiff::cpu {
namespace {

constexpr int kMaxOrder = 4;

// f_k = act^(k)(z) for k = 1..count along a row of h units, stored planar
// (f[k * h + j]) so the per-direction loops below read contiguous rows. For
// tanh every derivative is a polynomial in t = tanh(z), which the forward
// computes (vectorized for float32) and the backward reuses from the output.
template <typename T>
void derivative_rows(const T* z, const T* t, bool is_tanh, int count, int64_t h, T* f) {
  for (int64_t j = 0; j < h; ++j) {
    T all[5];
    if (is_tanh) {
      const T tj = t[j], t2 = tj * tj, f1 = T(1) - t2;
      all[0] = f1, all[1] = T(-2) * tj * f1, all[2] = f1 * (T(6) * t2 - T(2)), all[3] = f1 * tj * (T(16) - T(24) * t2);
      all[4] = f1 * (T(16) - T(120) * t2 + T(120) * t2 * t2);
    } else {
      const T s = std::sin(z[j]), c = std::cos(z[j]);
      all[0] = c, all[1] = -s, all[2] = -c, all[3] = s, all[4] = c;
    }
    for (int k = 0; k < count; ++k) f[k * h + j] = all[k];
  }
}

template <typename T>
void activate_row(const T* z, bool is_tanh, int64_t h, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    if (is_tanh) return vec_f32().tanh(z, y, h);
  }
  for (int64_t j = 0; j < h; ++j) y[j] = is_tanh ? std::tanh(z[j]) : std::sin(z[j]);
}

struct Layout {
  int64_t m, n, h;
  int64_t z1_row;  // stride of z1 between points: h, or 0 when shared by all points
  int64_t z1_dir() const { return z1_row ? n * h : h; }
};

bool parallel(const Layout& l) {
  return l.n > 1 && l.m * l.n * l.h >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
}

template <typename T, int K>
void forward(const Layout& l, bool is_tanh, int given, const T* z0, const T* const* z, T* y0, T* const* y) {
  const jet::ScalarOps<T> ops;
  const int64_t h = l.h;
#pragma omp parallel for schedule(static) if (parallel(l))
  for (int64_t p = 0; p < l.n; ++p) {
    std::vector<T> f(size_t(h) * K);
    activate_row(z0 + p * h, is_tanh, h, y0 + p * h);
    derivative_rows(z0 + p * h, y0 + p * h, is_tanh, K, h, f.data());
    for (int64_t d = 0; d < l.m; ++d) {
      const T* z1 = z[0] + d * l.z1_dir() + p * l.z1_row;
      const int64_t base = (d * l.n + p) * h;
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) {
        T zz[K] = {}, fj[K], yy[K];
        zz[0] = z1[j];
        for (int k = 1; k < K; ++k) zz[k] = k < given ? z[k][base + j] : T(0);
        for (int k = 0; k < K; ++k) fj[k] = f[k * h + j];
        jet::compose<K>(fj, zz, yy, ops);
        for (int k = 0; k < K; ++k) y[k][base + j] = yy[k];
      }
    }
  }
}

template <typename T, int K>
void backward(const Layout& l, bool is_tanh, int given, const T* z0, const T* y0, const T* const* z, const T* g0,
              const T* const* g, T* gz0, T* const* gz) {
  const jet::ScalarOps<T> ops;
  const int64_t h = l.h;
#pragma omp parallel for schedule(static) if (parallel(l))
  for (int64_t p = 0; p < l.n; ++p) {
    std::vector<T> f(size_t(h) * (K + 1)), acc(static_cast<size_t>(h));
    derivative_rows(z0 + p * h, y0 + p * h, is_tanh, K + 1, h, f.data());
    for (int64_t j = 0; j < h; ++j) acc[j] = g0[p * h + j] * f[j];
    for (int64_t d = 0; d < l.m; ++d) {
      const T* z1 = z[0] + d * l.z1_dir() + p * l.z1_row;
      const int64_t base = (d * l.n + p) * h;
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) {
        T zz[K], fj[K + 1], gg[K], out[K], part;
        zz[0] = z1[j];
        for (int k = 1; k < K; ++k) zz[k] = k < given ? z[k][base + j] : T(0);
        for (int k = 0; k <= K; ++k) fj[k] = f[k * h + j];
        for (int k = 0; k < K; ++k) gg[k] = g[k][base + j];
        jet::adjoint<K>(fj, zz, gg, out, part, ops);
        acc[j] += part;
        for (int k = 0; k < K; ++k)
          if (k < given) gz[k][base + j] = out[k];
      }
    }
    for (int64_t j = 0; j < h; ++j) gz0[p * h + j] = acc[j];
  }
}

std::vector<Tensor> contiguous_inputs(const KernelContext& ctx) {
  std::vector<Tensor> in;
  for (const auto& t : ctx.inputs) in.push_back(t.is_contiguous() ? t : contiguous(t));
  return in;
}

// `z1` is the index of the first coefficient among the inputs.
Layout layout_of(const std::vector<Tensor>& in, size_t z1 = 1) {
  return {in[z1].size(0), in[0].size(0), in[0].size(1), in[z1].size(1) == 1 ? 0 : in[0].size(1)};
}

template <typename T>
void run_forward(const KernelContext& ctx) {
  const int order = int(ctx.attrs.get_int("order"));
  const bool is_tanh = ctx.attrs.get_string("activation") == "tanh";
  const int given = int(ctx.inputs.size()) - 1;
  auto in = contiguous_inputs(ctx);
  const Layout l = layout_of(in);
  const T* z[kMaxOrder] = {};
  for (int k = 0; k < given; ++k) z[k] = in[k + 1].data<T>();
  T* y[kMaxOrder] = {};
  for (int k = 0; k < order; ++k) y[k] = ctx.outputs[k + 1].data<T>();
  const T* z0 = in[0].data<T>();
  T* y0 = ctx.outputs[0].data<T>();
  switch (order) {
    case 1: forward<T, 1>(l, is_tanh, given, z0, z, y0, y); break;
    case 2: forward<T, 2>(l, is_tanh, given, z0, z, y0, y); break;
    case 3: forward<T, 3>(l, is_tanh, given, z0, z, y0, y); break;
    default: forward<T, 4>(l, is_tanh, given, z0, z, y0, y); break;
  }
}

template <typename T>
void run_backward(const KernelContext& ctx) {
  const int order = int(ctx.attrs.get_int("order"));
  const int given = int(ctx.attrs.get_int("given"));
  const bool is_tanh = ctx.attrs.get_string("activation") == "tanh";
  auto in = contiguous_inputs(ctx);
  const Layout l = layout_of(in, 2);
  // Inputs: z0, y0 (the forward's output), z1..zG, dL/dy0..dL/dyK.
  const T* y0 = in[1].data<T>();
  const T* z[kMaxOrder] = {};
  for (int k = 0; k < given; ++k) z[k] = in[k + 2].data<T>();
  const T* g0 = in[given + 2].data<T>();
  const T* g[kMaxOrder] = {};
  for (int k = 0; k < order; ++k) g[k] = in[given + 3 + k].data<T>();
  T* gz[kMaxOrder] = {};
  for (int k = 0; k < given; ++k) gz[k] = ctx.outputs[k + 1].data<T>();
  const T* z0 = in[0].data<T>();
  T* gz0 = ctx.outputs[0].data<T>();
  switch (order) {
    case 1: backward<T, 1>(l, is_tanh, given, z0, y0, z, g0, g, gz0, gz); break;
    case 2: backward<T, 2>(l, is_tanh, given, z0, y0, z, g0, g, gz0, gz); break;
    case 3: backward<T, 3>(l, is_tanh, given, z0, y0, z, g0, g, gz0, gz); break;
    default: backward<T, 4>(l, is_tanh, given, z0, y0, z, g0, g, gz0, gz); break;
  }
}

void activation_jet_cpu(const KernelContext& ctx) {
  if (ctx.inputs[0].dtype() == DType::Float64)
    run_forward<double>(ctx);
  else
    run_forward<float>(ctx);
}

void activation_jet_backward_cpu(const KernelContext& ctx) {
  if (ctx.inputs[0].dtype() == DType::Float64)
    run_backward<double>(ctx);
  else
    run_backward<float>(ctx);
}

}  // namespace

SKIFF_REGISTER_KERNEL(activation_jet, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0,
                      activation_jet_cpu);
SKIFF_REGISTER_KERNEL(activation_jet_backward, CPU, "cpu", dtype_bit(DType::Float32) | dtype_bit(DType::Float64), 0,
                      activation_jet_backward_cpu);

}  // namespace skiff::cpu
