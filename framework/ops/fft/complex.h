#pragma once
/// \file complex.h
/// Complex-tensor element-wise ops: taking complex64/complex128 tensors apart
/// (real, imag, abs, angle) and putting them together (complex, polar), plus conj.
///
/// Gradient convention (PyTorch's): for a real loss L of a complex tensor z, the
/// gradient stored for z is dL/dRe(z) + i dL/dIm(z) (twice the conjugate Wirtinger
/// derivative dL/dz*). For a holomorphic f, the backward is grad_in = conj(f'(z)) *
/// grad_out; for a C-linear map y = A z it is A^H grad_out. Real inputs promoted to
/// complex receive the real part of the gradient. With this convention a finite
/// difference check over the real and imaginary parts of the inputs and outputs
/// (tests/framework/ops/fft/complex_test.cpp) passes for every op here, for
/// complex add/sub/mul/div (elementwise/binary.h) and for complex matmul.
///
/// real() and imag() return new tensors (copies), not views of the complex storage.
/// complex128 pairs with float64, complex64 with float32 (dtype.h to_real/to_complex).
/// abs() of a complex tensor is declared in elementwise/unary.h; it returns |z| in the
/// real dtype, with gradient grad * z / |z| (0 where z = 0).

#include "framework/tensor/tensor.h"

namespace skiff {

/// Real part as a new real tensor [same shape]: complex64 -> float32, complex128 ->
/// float64. A real input is returned as is. Gradient: grad + 0i.
Tensor real(const Tensor& z);
/// Imaginary part as a new real tensor. Gradient: 0 + i grad.
/// \throws TypeError for a real input (as PyTorch does).
Tensor imag(const Tensor& z);
/// Complex conjugate (a copy). Real tensors are returned as is. Gradient: conj(grad).
Tensor conj(const Tensor& z);
/// Argument atan2(Im z, Re z) in (-pi, pi], in the real dtype. For real inputs: pi
/// where x < 0, else 0 (no gradient). Gradient for complex z: grad * i z / |z|^2
/// (0 where z = 0).
Tensor angle(const Tensor& z);
/// re + i im, broadcasting. Both must be float32 (-> complex64) or both float64
/// (-> complex128). Gradients: Re(grad) and Im(grad), summed to each input's shape.
/// \throws TypeError for other or mismatched dtypes.
Tensor complex(const Tensor& re, const Tensor& im);
/// abs * (cos(angle) + i sin(angle)), broadcasting, with complex()'s dtype rules.
/// Composite (differentiable through complex, mul, cos and sin).
Tensor polar(const Tensor& abs, const Tensor& angle);

}  // namespace skiff
