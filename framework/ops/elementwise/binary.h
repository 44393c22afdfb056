#pragma once
/// \file binary.h
/// Binary element-wise ops with NumPy broadcasting and type promotion.
///
/// Shapes broadcast (shape [3,1] with [4] -> [3,4]); dtypes promote with
/// promote_types() (int32 + float32 -> float32). A double scalar operand does
/// not widen a float tensor (x_f32 * 2.0 stays float32). Gradients of broadcast
/// inputs are summed back to the input shape.
///
/// add/sub/mul/div also take complex64/complex128 tensors (a real operand is promoted).
/// Their gradients follow PyTorch's conjugate convention (fft/complex.h): the gradient
/// of an input z is grad_out * conj(d out / d z), e.g. mul: grad_a = grad * conj(b);
/// a real input promoted to complex receives the real part.

#include "framework/tensor/tensor.h"

namespace skiff {

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
/// True division: integer inputs give float32.
Tensor div(const Tensor& a, const Tensor& b);
/// a ** b. Integer inputs stay integer.
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, double exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

Tensor add(const Tensor& a, double b);
Tensor sub(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor div(const Tensor& a, double b);
/// a - b with a scalar on the left.
Tensor sub(double a, const Tensor& b);

/// Comparisons return bool tensors (no gradient).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double b);
Tensor ne(const Tensor& a, double b);
Tensor lt(const Tensor& a, double b);
Tensor le(const Tensor& a, double b);
Tensor gt(const Tensor& a, double b);
Tensor ge(const Tensor& a, double b);

/// Logical ops treat non-zero as true and return bool tensors.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);

/// cond ? a : b element-wise, broadcasting all three. cond must be bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, double b);
Tensor where(const Tensor& cond, double a, const Tensor& b);

/// In-place variants write into `a` (its shape must be the broadcast shape).
/// They refuse tensors that autograd tracks.
Tensor& add_(Tensor& a, const Tensor& b);
Tensor& sub_(Tensor& a, const Tensor& b);
Tensor& mul_(Tensor& a, const Tensor& b);
Tensor& div_(Tensor& a, const Tensor& b);
Tensor& add_(Tensor& a, double b);
Tensor& mul_(Tensor& a, double b);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, double b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, double b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, double b) { return div(a, b); }
inline Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(double a, const Tensor& b);
inline Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
Tensor operator/(double a, const Tensor& b);
Tensor operator-(const Tensor& a);

}  // namespace skiff
