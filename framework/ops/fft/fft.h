#pragma once
/// \file fft.h
/// Discrete Fourier transforms with torch.fft semantics: fft/ifft/rfft/irfft over one
/// dim, the *2 variants over two dims (the last two by default), the *n variants over
/// any set of dims.
///
/// Definitions, for a signal x of length n along a transformed dim:
///   forward   X[k] = s * sum_t x[t] exp(-2 pi i k t / n)   (fft, rfft, fft2, ...)
///   inverse   x[t] = s * sum_k X[k] exp(+2 pi i k t / n)   (ifft, irfft, ...)
/// and the product of these over every transformed dim. The scale s comes from `norm`:
///   "backward" (default): forward 1,         inverse 1/n
///   "ortho":              forward 1/sqrt(n), inverse 1/sqrt(n)
///   "forward":            forward 1/n,       inverse 1
/// with n the product of the signal sizes over all transformed dims.
///
/// Signal sizes (`n`, `s`): each transformed dim is first zero-padded or trimmed (from
/// the end) to the requested size; -1 / nullopt keeps the input size. For irfft* the
/// size is the length of the real output (default 2 * (m - 1) for an input of m
/// entries along the last transformed dim), and that input dim is trimmed or padded to
/// size / 2 + 1 first.
///
/// Real <-> complex:
///  - rfft* take a real input and return only the non-negative frequencies of the last
///    transformed dim: [..., n] -> [..., n / 2 + 1] complex.
///  - irfft* take that half spectrum and return the real signal. As in PyTorch and
///    pocketfft/FFTW, the input is treated as the half of a Hermitian spectrum: the
///    imaginary parts of the zero-frequency (and, for even n, the Nyquist) entries along
///    the last dim are ignored.
///  - fft* of a real input transform it as complex (imaginary part zero).
///
/// Dtypes: complex64 and complex128 (float32 -> complex64, float64 -> complex128;
/// integer, bool, float16 and bfloat16 inputs compute in float32/complex64 first). The
/// output of a complex transform is complex of the same precision; irfft* outputs
/// float32/float64.
///
/// Gradients follow the convention of fft/complex.h (grad = dL/dRe + i dL/dIm), so the
/// adjoint of a transform is the transform in the other direction with the same scale;
/// rfft's adjoint zero-fills the missing negative frequencies, irfft's doubles the
/// frequencies that stand for two (PyTorch's formulas). All are differentiable to any
/// order.
///
/// Errors name the op: IndexError for a dim out of range or listed twice, ValueError for
/// a non-positive signal size, an unknown `norm`, or `s` and `dims` of different
/// lengths; TypeError for a complex input to rfft*.
///
/// CPU backend: FFTW3 (docs/design.md, "FFT backend"); batches are spread over
/// SKIFF_NUM_THREADS OpenMP threads.
///
///   Tensor x = randn({4, 256});
///   Tensor X = rfft(x);                  // [4, 129] complex64
///   Tensor y = irfft(X, 256);            // == x up to rounding
///   Tensor P = abs(fft2(randn({8, 64, 64}), {}, {-2, -1}, "ortho"));

#include <optional>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

/// 1-D transform along `dim` with signal size `n` (default: the input size).
Tensor fft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
           const std::string& norm = "backward");
/// 1-D inverse transform.
Tensor ifft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            const std::string& norm = "backward");
/// 1-D transform of a real input: [..., n] -> [..., n / 2 + 1] complex.
Tensor rfft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            const std::string& norm = "backward");
/// Inverse of rfft: [..., m] complex -> [..., n] real, n defaulting to 2 * (m - 1).
Tensor irfft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
             const std::string& norm = "backward");

/// 2-D transforms over `dims` (two distinct dims), sizes `s` (empty: input sizes).
Tensor fft2(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {-2, -1},
            const std::string& norm = "backward");
Tensor ifft2(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {-2, -1},
             const std::string& norm = "backward");
/// The last of `dims` is the halved one.
Tensor rfft2(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {-2, -1},
             const std::string& norm = "backward");
Tensor irfft2(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {-2, -1},
              const std::string& norm = "backward");

/// N-D transforms. `dims` empty: the last s.size() dims when `s` is given, else all
/// dims. `s` empty: input sizes (irfftn: 2 * (m - 1) for the last dim); an entry of -1
/// keeps that dim's input size. \throws ValueError if both are given with different lengths.
Tensor fftn(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {},
            const std::string& norm = "backward");
Tensor ifftn(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {},
             const std::string& norm = "backward");
Tensor rfftn(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {},
             const std::string& norm = "backward");
Tensor irfftn(const Tensor& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {},
              const std::string& norm = "backward");

}  // namespace skiff
