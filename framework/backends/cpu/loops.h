#pragma once
/// \file loops.h
/// Element-wise loop templates for CPU kernels, on top of for_each_strided.
/// Each has a fast path for contiguous runs (vectorized by the compiler) and a
/// strided fallback; broadcast operands arrive with stride 0.

#include <type_traits>

#include "framework/ops/op.h"
#include "framework/tensor/convert.h"
#include "framework/tensor/strided_loop.h"

namespace skiff::cpu {

/// Type arithmetic happens in: float for the 16-bit float types, T otherwise.
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename Out, typename In, typename F>
void unary_loop(const Tensor& out, const Tensor& in, F f) {
  using A = acc_t<In>;
  std::array<Shape, 2> st = {detail::broadcast_byte_strides(out, out.shape()),
                             detail::broadcast_byte_strides(in, out.shape())};
  detail::for_each_strided<2>(out.shape(), {static_cast<char*>(out.data_ptr()), static_cast<char*>(in.data_ptr())},
                              st, [&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(In))) {
      Out* __restrict o = reinterpret_cast<Out*>(p[0]);
      const In* __restrict x = reinterpret_cast<const In*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = detail::convert<Out>(f(A(x[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = detail::convert<Out>(f(A(*reinterpret_cast<const In*>(p[1] + i * s[1]))));
    }
  });
}

template <typename Out, typename In, typename F>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  using A = acc_t<In>;
  std::array<Shape, 3> st = {detail::broadcast_byte_strides(out, out.shape()),
                             detail::broadcast_byte_strides(a, out.shape()),
                             detail::broadcast_byte_strides(b, out.shape())};
  detail::for_each_strided<3>(
      out.shape(),
      {static_cast<char*>(out.data_ptr()), static_cast<char*>(a.data_ptr()), static_cast<char*>(b.data_ptr())}, st,
      [&](char** p, const int64_t* s, int64_t n) {
        constexpr int64_t so = sizeof(Out), si = sizeof(In);
        Out* __restrict o = reinterpret_cast<Out*>(p[0]);
        const In* __restrict x = reinterpret_cast<const In*>(p[1]);
        const In* __restrict y = reinterpret_cast<const In*>(p[2]);
        if (s[0] == so && s[1] == si && s[2] == si) {
          for (int64_t i = 0; i < n; ++i) o[i] = detail::convert<Out>(f(A(x[i]), A(y[i])));
        } else if (s[0] == so && s[1] == si && s[2] == 0) {
          const A yv = A(*y);
          for (int64_t i = 0; i < n; ++i) o[i] = detail::convert<Out>(f(A(x[i]), yv));
        } else if (s[0] == so && s[1] == 0 && s[2] == si) {
          const A xv = A(*x);
          for (int64_t i = 0; i < n; ++i) o[i] = detail::convert<Out>(f(xv, A(y[i])));
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<Out*>(p[0] + i * s[0]) = detail::convert<Out>(
                f(A(*reinterpret_cast<const In*>(p[1] + i * s[1])), A(*reinterpret_cast<const In*>(p[2] + i * s[2]))));
        }
      });
}

/// Float32 fast path through a per-ISA vector kernel (vec/vec_f32.h): contiguous
/// runs go to `vec`, other runs to the scalar `fallback`. Returns false (doing
/// nothing) unless both tensors are float32.
template <typename Fallback>
bool unary_vec_f32(const Tensor& out, const Tensor& in, void (*vec)(const float*, float*, int64_t), Fallback fallback) {
  if (out.dtype() != DType::Float32 || in.dtype() != DType::Float32) return false;
  std::array<Shape, 2> st = {detail::broadcast_byte_strides(out, out.shape()),
                             detail::broadcast_byte_strides(in, out.shape())};
  detail::for_each_strided<2>(out.shape(), {static_cast<char*>(out.data_ptr()), static_cast<char*>(in.data_ptr())},
                              st, [&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == 4 && s[1] == 4) {
      vec(reinterpret_cast<const float*>(p[1]), reinterpret_cast<float*>(p[0]), n);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<float*>(p[0] + i * s[0]) = fallback(*reinterpret_cast<const float*>(p[1] + i * s[1]));
    }
  });
  return true;
}

/// Binary float32 fast path: runs where all three operands are contiguous use `vec`.
template <typename Fallback>
bool binary_vec_f32(const Tensor& out, const Tensor& a, const Tensor& b,
                    void (*vec)(const float*, const float*, float*, int64_t), Fallback fallback) {
  if (out.dtype() != DType::Float32 || a.dtype() != DType::Float32) return false;
  std::array<Shape, 3> st = {detail::broadcast_byte_strides(out, out.shape()),
                             detail::broadcast_byte_strides(a, out.shape()),
                             detail::broadcast_byte_strides(b, out.shape())};
  detail::for_each_strided<3>(
      out.shape(),
      {static_cast<char*>(out.data_ptr()), static_cast<char*>(a.data_ptr()), static_cast<char*>(b.data_ptr())}, st,
      [&](char** p, const int64_t* s, int64_t n) {
        if (s[0] == 4 && s[1] == 4 && s[2] == 4) {
          vec(reinterpret_cast<const float*>(p[1]), reinterpret_cast<const float*>(p[2]), reinterpret_cast<float*>(p[0]), n);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<float*>(p[0] + i * s[0]) =
                fallback(*reinterpret_cast<const float*>(p[1] + i * s[1]), *reinterpret_cast<const float*>(p[2] + i * s[2]));
        }
      });
  return true;
}

/// Dtype visitors limited to a category, so kernels only instantiate what makes sense.
/// They throw NotImplementedError naming the kernel for other dtypes.
template <typename Fn>
void visit_floating(DType t, const char* kernel, Fn&& fn) {
  switch (t) {
    case DType::Float32: fn(TypeTag<float>{}); return;
    case DType::Float64: fn(TypeTag<double>{}); return;
    case DType::Float16: fn(TypeTag<Half>{}); return;
    case DType::BFloat16: fn(TypeTag<BFloat16>{}); return;
    default: SKIFF_THROW(NotImplementedError, "{}: dtype {} is not supported", kernel, dtype_name(t));
  }
}
template <typename Fn>
void visit_real(DType t, const char* kernel, Fn&& fn) {  // floats and integers (no bool, no complex)
  switch (t) {
    case DType::UInt8: fn(TypeTag<uint8_t>{}); return;
    case DType::Int8: fn(TypeTag<int8_t>{}); return;
    case DType::Int32: fn(TypeTag<int32_t>{}); return;
    case DType::Int64: fn(TypeTag<int64_t>{}); return;
    default: visit_floating(t, kernel, std::forward<Fn>(fn));
  }
}
template <typename Fn>
void visit_numeric(DType t, const char* kernel, Fn&& fn) {  // real + complex
  switch (t) {
    case DType::Complex64: fn(TypeTag<complex64>{}); return;
    case DType::Complex128: fn(TypeTag<complex128>{}); return;
    default: visit_real(t, kernel, std::forward<Fn>(fn));
  }
}

}  // namespace skiff::cpu
