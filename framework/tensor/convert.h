#pragma once
/// \file convert.h
/// Value conversion between any two element types (including complex, half and bool).

#include <complex>
#include <limits>
#include <type_traits>

#include "framework/core/dtype.h"

namespace skiff::detail {

template <typename T> struct is_complex_t : std::false_type {};
template <typename T> struct is_complex_t<std::complex<T>> : std::true_type {};
template <typename T> inline constexpr bool is_complex_v = is_complex_t<T>::value;

/// Converts like a C++ static_cast, with these rules: complex -> real keeps the
/// real part; anything -> bool is "!= 0"; half types go through float.
template <typename Dst, typename Src>
inline Dst convert(Src v) {
  if constexpr (std::is_same_v<Dst, Src>) {
    return v;
  } else if constexpr (is_complex_v<Src>) {
    if constexpr (is_complex_v<Dst>) return Dst(typename Dst::value_type(v.real()), typename Dst::value_type(v.imag()));
    else if constexpr (std::is_same_v<Dst, bool>) return v != Src(0);
    else return convert<Dst>(v.real());
  } else if constexpr (std::is_same_v<Src, Half> || std::is_same_v<Src, BFloat16>) {
    return convert<Dst>(float(v));
  } else if constexpr (is_complex_v<Dst>) {
    return Dst(typename Dst::value_type(convert<double>(v)), 0);
  } else if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src(0);
  } else if constexpr (std::is_same_v<Dst, Half> || std::is_same_v<Dst, BFloat16>) {
    return Dst(float(v));
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    // A float outside the integer's range (or NaN) has no value there, and C++ leaves the
    // conversion undefined; weights and attributes come from files, so it saturates
    // instead (NaN gives 0).
    if (!(v == v)) return Dst(0);
    if (v <= Src(std::numeric_limits<Dst>::min())) return std::numeric_limits<Dst>::min();
    if (v >= Src(std::numeric_limits<Dst>::max())) return std::numeric_limits<Dst>::max();
    return static_cast<Dst>(v);
  } else {
    return static_cast<Dst>(v);
  }
}

}  // namespace skiff::detail
