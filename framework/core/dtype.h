#pragma once
/// \file dtype.h
/// Element types, their sizes and names, and NumPy-style type promotion.

#include <complex>
#include <cstdint>
#include <string_view>

#include "framework/core/half.h"

namespace skiff {

/// Element type of a tensor. The order is the promotion lattice within each
/// category (bool < integers < floats < complex).
enum class DType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
};
inline constexpr int kNumDTypes = 11;

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

/// Size of one element in bytes.
int64_t itemsize(DType t);
/// Lower-case name as used in safetensors/ONNX-style listings: "float32", "int64", ...
std::string_view dtype_name(DType t);
/// Parses a name produced by dtype_name (also accepts "f32", "half", "bf16", ...).
/// \throws ValueError for an unknown name.
DType dtype_from_name(std::string_view name);

inline bool is_floating(DType t) { return t >= DType::Float16 && t <= DType::Float64; }
inline bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
inline bool is_integral(DType t, bool include_bool = false) {
  return (t >= DType::UInt8 && t <= DType::Int64) || (include_bool && t == DType::Bool);
}
/// Float and complex types: the ones that carry gradients.
inline bool is_differentiable(DType t) { return is_floating(t) || is_complex(t); }

/// Result type of a binary op on tensors of types a and b (NumPy/PyTorch rules:
/// the higher category wins; within floats, fp16 + bf16 -> fp32; uint8 + int8 -> int32...).
DType promote_types(DType a, DType b);
/// Real counterpart of a complex type (complex64 -> float32); identity otherwise.
DType to_real(DType t);
/// Complex counterpart of a real float type (float64 -> complex128).
DType to_complex(DType t);

/// Maps a C++ type to its DType at compile time.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<complex64> { static constexpr DType value = DType::Complex64; };
template <> struct DTypeOf<complex128> { static constexpr DType value = DType::Complex128; };
template <typename T> inline constexpr DType dtype_of = DTypeOf<T>::value;

/// Tag carrying a C++ type, passed to dtype visitors.
template <typename T> struct TypeTag { using type = T; };

/// Calls fn(TypeTag<T>{}) with the C++ type of `t`.
/// Usage: visit_dtype(t, [&](auto tag) { using T = typename decltype(tag)::type; ... });
template <typename Fn>
decltype(auto) visit_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::Bool: return fn(TypeTag<bool>{});
    case DType::UInt8: return fn(TypeTag<uint8_t>{});
    case DType::Int8: return fn(TypeTag<int8_t>{});
    case DType::Int32: return fn(TypeTag<int32_t>{});
    case DType::Int64: return fn(TypeTag<int64_t>{});
    case DType::Float16: return fn(TypeTag<Half>{});
    case DType::BFloat16: return fn(TypeTag<BFloat16>{});
    case DType::Float32: return fn(TypeTag<float>{});
    case DType::Float64: return fn(TypeTag<double>{});
    case DType::Complex64: return fn(TypeTag<complex64>{});
    case DType::Complex128: return fn(TypeTag<complex128>{});
  }
  return fn(TypeTag<float>{});  // unreachable
}

}  // namespace skiff
