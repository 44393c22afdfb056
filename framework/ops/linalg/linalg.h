#pragma once
/// \file linalg.h
/// Linear algebra: matrix products (matmul, bmm, linear, dot, outer, einsum) and
/// dense decompositions (solve, inverse, cholesky, det).
///
/// Products accept every real dtype (float16/bfloat16 accumulate in float32,
/// integers wrap on overflow like NumPy) and complex64/complex128 (matmul, bmm,
/// linear, dot, outer; dot does not conjugate, like torch.dot); mixed inputs are
/// promoted first (NumPy rules). Bool inputs throw NotImplementedError. Complex
/// gradients are conjugate transposes (grad_a = grad b^H; fft/complex.h). Batch dims
/// broadcast with NumPy rules. All products are differentiable to any order: their
/// backward is written with matmul itself.
///
/// Decompositions (solve, inverse, cholesky, det) take float32 or float64 input of
/// shape [..., n, n] and work independently on every matrix of the leading batch.
///
/// Shape errors throw ShapeError naming the op and both shapes; unsupported dtypes
/// throw TypeError or NotImplementedError.

#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

/// Matrix product with NumPy semantics:
///  - [K] x [K] -> [] (dot product);
///  - [M, K] x [K, N] -> [M, N];
///  - a 1-D left operand [K] is treated as [1, K] and the 1 is removed from the result;
///    a 1-D right operand [K] is treated as [K, 1] and the 1 is removed;
///  - otherwise the last two dims are the matrices and the leading dims broadcast:
///    [B, 1, M, K] x [H, K, N] -> [B, H, M, N].
/// Transposed or otherwise strided inputs are read in place when the layout allows.
/// \throws ShapeError if the inner dims differ, batch dims do not broadcast, or an input is 0-d;
///         NotImplementedError for bool inputs.
Tensor matmul(const Tensor& a, const Tensor& b);

/// Batched product of two 3-D tensors: [B, M, K] x [B, K, N] -> [B, M, N] (no broadcasting).
/// \throws ShapeError unless both are 3-D with equal B and matching K.
Tensor bmm(const Tensor& a, const Tensor& b);

/// Affine map x w^T + b: x [..., in], weight [out, in], optional bias [out] -> [..., out].
/// Pass an undefined Tensor() for no bias. The weight is read transposed in place (no copy).
/// \throws ShapeError if x's last dim differs from `in`, weight is not 2-D, or bias is not [out].
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

/// Inner product of two 1-D tensors of equal length -> 0-d tensor.
/// \throws ShapeError unless both are 1-D with the same length.
Tensor dot(const Tensor& a, const Tensor& b);

/// Outer product of 1-D tensors: [M] x [N] -> [M, N], out[i, j] = a[i] * b[j].
/// \throws ShapeError unless both are 1-D.
Tensor outer(const Tensor& a, const Tensor& b);

/// Einstein summation over one or two operands, e.g. "ij,jk->ik", "bhqd,bhkd->bhqk",
/// "i,i->", "ij->ji", "ii->i" (diagonal), "ii->" (trace), "ij->" (sum), "bi,bj->bij".
/// Subscripts are letters a-z/A-Z; without "->" the output is the letters used exactly
/// once, in alphabetical order (NumPy's implicit mode). A letter repeated within one
/// operand takes its diagonal. Two-operand contractions run as one batched matmul.
/// \throws ValueError for a malformed equation (a subscript count that differs from the number
///         of operands, a non-letter, an output letter absent from the inputs or repeated),
///         ShapeError when an operand's dim count differs from its subscripts or the sizes of
///         one letter disagree, NotImplementedError (naming the equation) for "..." or more
///         than two operands.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

/// Solves A X = B for X. A [..., n, n]; B [..., n, k] or a vector B [..., n] (when B is 1-D,
/// or B's shape equals A's shape without its last dim). Batch dims broadcast.
/// Float32/float64; B is promoted to A's type. Differentiable in A and B.
/// \throws ShapeError for non-square A or mismatched n, TypeError for other dtypes,
///         ValueError("solve: ... singular ...") when some matrix of A is singular
///         (an LU pivot below n * eps * the largest pivot).
Tensor solve(const Tensor& a, const Tensor& b);

/// Inverse of every matrix of A [..., n, n] (float32/float64). Differentiable:
/// dA = -A^-T g A^-T.
/// \throws ShapeError for non-square input, ValueError("inverse: ... singular ...").
Tensor inverse(const Tensor& a);

/// Lower Cholesky factor L (A = L L^T) of every matrix of A [..., n, n] (float32/float64).
/// Only the lower triangle of A is read (A is assumed symmetric). Differentiable (to any
/// order): dA = sym(L^-T Phi(L^T dL) L^-1) with Phi = lower triangle with halved diagonal.
/// \throws ShapeError for non-square input, ValueError("cholesky: ...") when a matrix is not
///         positive definite.
Tensor cholesky(const Tensor& a);

/// Determinant of every matrix of A [..., n, n] -> [...] (float32/float64), via LU with
/// partial pivoting; singular matrices give 0. Differentiable where A is invertible:
/// d det = det * A^-T (the backward throws ValueError for a singular A).
/// \throws ShapeError for non-square input.
Tensor det(const Tensor& a);

}  // namespace skiff
