#include "framework/core/dtype.h"

#include <string>

#include "framework/core/error.h"

namespace skiff {

int64_t itemsize(DType t) {
  switch (t) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return 1;
    case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: case DType::Complex64: return 8;
    case DType::Complex128: return 16;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
  }
  return "?";
}

DType dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype_name(DType(i)) == name) return DType(i);
  struct Alias { const char* name; DType t; };
  static const Alias aliases[] = {{"f32", DType::Float32}, {"float", DType::Float32},
      {"f64", DType::Float64}, {"double", DType::Float64}, {"f16", DType::Float16},
      {"half", DType::Float16}, {"bf16", DType::BFloat16}, {"i32", DType::Int32},
      {"int", DType::Int32}, {"i64", DType::Int64}, {"long", DType::Int64}, {"u8", DType::UInt8},
      {"i8", DType::Int8}, {"c64", DType::Complex64}, {"c128", DType::Complex128}};
  for (const auto& a : aliases)
    if (name == a.name) return a.t;
  SKIFF_THROW(ValueError, "unknown dtype '{}' (expected one of bool, uint8, int8, int32, int64, "
              "float16, bfloat16, float32, float64, complex64, complex128)", name);
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  auto category = [](DType t) { return t == DType::Bool ? 0 : is_integral(t) ? 1 : is_floating(t) ? 2 : 3; };
  int ca = category(a), cb = category(b);
  if (ca != cb) {
    DType hi = ca > cb ? a : b, lo = ca > cb ? b : a;
    // complex absorbs float64 precision: complex64 + float64 -> complex128
    if (is_complex(hi) && lo == DType::Float64) return DType::Complex128;
    return hi;
  }
  if (ca == 1) {
    // uint8 with a signed type needs the next wider signed type.
    if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) return DType::Int32;
    return a > b ? a : b;
  }
  if (ca == 2) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return a > b ? a : b;
  }
  return a > b ? a : b;
}

DType to_real(DType t) {
  if (t == DType::Complex64) return DType::Float32;
  if (t == DType::Complex128) return DType::Float64;
  return t;
}

DType to_complex(DType t) {
  if (t == DType::Float64) return DType::Complex128;
  if (is_complex(t)) return t;
  return DType::Complex64;
}

}  // namespace skiff
