#pragma once
/// \file reference.h
/// What specs are written with: input makers (random, strided, expanded, empty)
/// and reference helpers that compute in float64/complex128 on plain vectors, never
/// through the op under test (scalar maps with broadcasting, reductions over dims,
/// finite-difference vector-Jacobian products for backward ops), plus the
/// comparison the generic suites use.

#include <complex>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "framework/ops/nn/fused.h"
#include "tests/framework/ops/specs/op_spec.h"

namespace skiff::spec {

// ---- inputs -------------------------------------------------------------------------

/// Random contiguous tensor in [lo, hi) (integers: [lo, hi] rounded, clamped at 0 for
/// uint8; bool: random; complex: both parts in [lo, hi)).
Tensor make(const Shape& shape, DType dtype, Generator& gen, double lo = -2, double hi = 2);
/// The same values laid out non-contiguously: a transpose of the last two dims (needs 2 dims).
Tensor transposed(const Shape& shape, DType dtype, Generator& gen, double lo = -2, double hi = 2);
/// Every other element of a twice-as-long last dim (slice with step 2).
Tensor stepped(const Shape& shape, DType dtype, Generator& gen, double lo = -2, double hi = 2);
/// Every dim's stride reversed (memory holds the reversed shape, permuted back): no
/// two neighbouring dims are contiguous, unlike a transpose of the last two.
Tensor permuted(const Shape& shape, DType dtype, Generator& gen, double lo = -2, double hi = 2);
/// A size-1 leading dim expanded to shape[0] (stride 0).
Tensor expanded(const Shape& shape, DType dtype, Generator& gen, double lo = -2, double hi = 2);
/// Contiguous copies of every input (the suites' "same result as contiguous" check).
Tensors contiguous_copies(const Tensors& xs);
bool any_strided(const Tensors& xs);
bool any_empty(const Tensors& xs);

// ---- plain values -------------------------------------------------------------------

/// Row-major values as float64 (bool -> 0/1). Complex input: the real part.
std::vector<double> values(const Tensor& x);
std::vector<std::complex<double>> cvalues(const Tensor& x);
/// A tensor of `dtype` holding `v` (row-major), rounded to dtype like a kernel's store.
Tensor tensor_of(const std::vector<double>& v, const Shape& shape, DType dtype);
Tensor tensor_of(const std::vector<std::complex<double>>& v, const Shape& shape, DType dtype);
/// Row-major multi-index of flat position i in `shape`.
std::vector<int64_t> unravel(int64_t i, const Shape& shape);
int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape);

// ---- element-wise references ----------------------------------------------------------

using Scalar1 = std::function<double(double)>;
using Scalar2 = std::function<double(double, double)>;
using Complex2 = std::function<std::complex<double>(std::complex<double>, std::complex<double>)>;

/// NumPy broadcast of two shapes. \throws ShapeError as the ops do.
Shape broadcast(const Shape& a, const Shape& b);
/// f over every element, stored as `out` (integer results wrap modulo 2^bits, as C++
/// integer arithmetic in the kernels does).
Tensor map1(const Tensor& x, const Scalar1& f, DType out);
Tensor map1c(const Tensor& x, const std::function<std::complex<double>(std::complex<double>)>& f, DType out);
/// f over the broadcast of a and b.
Tensor map2(const Tensor& a, const Tensor& b, const Scalar2& f, DType out);
Tensor map2c(const Tensor& a, const Tensor& b, const Complex2& f, DType out);
/// c ? a : b, broadcasting all three.
Tensor select3(const Tensor& c, const Tensor& a, const Tensor& b, DType out);

/// out[i] = x[src(i)] for every element i of `shape` (src returns x's row-major flat
/// position, or -1 for a zero): the reference of views, copies and scatters of data.
Tensor index_map(const Tensor& x, const Shape& shape, const std::function<int64_t(const std::vector<int64_t>&)>& src,
                 DType out);

/// One post-op step of the fused ops (framework/ops/nn/fused.h) on a value; `residual` is
/// read by Sum only.
double post_step(const PostStep& s, double x, double residual);
/// Values of an NCHW tensor in the channel-blocked layout [N, ceil(C / 16), H, W, 16] (zero
/// padded), and back: the fused ops' layout, by index arithmetic.
Tensor block_channels_ref(const Tensor& x, DType out);
Tensor unblock_channels_ref(const Tensor& x, int64_t channels, DType out);

// ---- reductions ------------------------------------------------------------------------

/// Applies f to the values of each group of elements that share the kept dims
/// (dims empty: all). Returns the reduced tensor (keepdim keeps size-1 dims).
Tensor reduce(const Tensor& x, std::vector<int64_t> dims, bool keepdim,
              const std::function<double(const std::vector<double>&)>& f, DType out);
/// reduce() over complex values (sum and prod of complex tensors).
Tensor reducec(const Tensor& x, std::vector<int64_t> dims, bool keepdim,
               const std::function<std::complex<double>(const std::vector<std::complex<double>>&)>& f, DType out);
/// The normalised dim (negative counts from the end).
int64_t wrap_dim(int64_t d, int64_t ndim);

// ---- gradients -------------------------------------------------------------------------

/// The tol_scale of a sample whose reference comes from numeric_vjp: central
/// differences are good to ~1e-9 relative, far above float64's default tolerance.
inline double numeric_tol_scale(DType t) { return t == DType::Float64 ? 1e4 : 1; }
/// d/d inputs[which] of sum(forward(inputs)[out] * g), by central differences in
/// float64: the reference a backward op (which computes that vector-Jacobian
/// product) is checked against. `inputs` are converted to float64 first.
Tensor numeric_vjp(const RunFn& forward, const Tensors& inputs, int which, const Tensor& g, int out = 0,
                   double eps = 1e-6);

// ---- comparison ------------------------------------------------------------------------

/// Default (atol, rtol) for comparing results of `dtype`.
std::pair<double, double> tolerance(DType dtype);
/// "" when `actual` has expected's shape and dtype and every element is within
/// atol + rtol |expected| (NaN matches NaN); else the first mismatch, with both values.
std::string compare(const Tensor& actual, const Tensor& expected, double atol, double rtol);
/// compare() for every output, with the tolerance of expected's dtype times scale.
std::string compare_all(const Tensors& actual, const Tensors& expected, double scale = 1);

}  // namespace skiff::spec
