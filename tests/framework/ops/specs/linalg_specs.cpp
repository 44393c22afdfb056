// Specs of the linear-algebra ops. matmul has a naive triple-loop reference (with
// NumPy's 1-D and batch rules); the decompositions are checked by the property that
// defines them: A x = b, A inv(A) = I, L L^T = A with L lower, det by cofactors.
#include <cmath>

#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using cd = std::complex<double>;

// NumPy matmul in complex<double>: 1-D operands get a unit dim (removed again), the
// leading dims broadcast.
Tensor ref_matmul(const Tensor& a0, const Tensor& b0, DType out) {
  Shape as = a0.shape(), bs = b0.shape();
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as = Shape{1, as[0]};
  if (b1) bs = Shape{bs[0], 1};
  const int64_t m = as[as.size() - 2], k = as[as.size() - 1], n = bs[bs.size() - 1];
  Shape abatch(std::vector<int64_t>(as.begin(), as.end() - 2)), bbatch(std::vector<int64_t>(bs.begin(), bs.end() - 2));
  Shape batch = broadcast(abatch, bbatch);
  std::vector<cd> av = cvalues(a0), bv = cvalues(b0);
  if (!is_complex(a0.dtype())) {
    auto r = values(a0);
    for (size_t i = 0; i < r.size(); ++i) av[i] = r[i];
  }
  if (!is_complex(b0.dtype())) {
    auto r = values(b0);
    for (size_t i = 0; i < r.size(); ++i) bv[i] = r[i];
  }
  auto batch_index = [](const std::vector<int64_t>& idx, const Shape& s) {
    int64_t i = 0;
    size_t lead = idx.size() - s.size();
    for (size_t d = 0; d < size_t(s.size()); ++d) i = i * s[d] + (s[d] == 1 ? 0 : idx[lead + d]);
    return i;
  };
  std::vector<cd> r(size_t(batch.numel() * m * n));
  for (int64_t bi = 0; bi < batch.numel(); ++bi) {
    auto idx = unravel(bi, batch);
    int64_t ao = batch_index(idx, abatch) * m * k, bo = batch_index(idx, bbatch) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        cd acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += av[size_t(ao + i * k + p)] * bv[size_t(bo + p * n + j)];
        r[size_t((bi * m + i) * n + j)] = acc;
      }
  }
  std::vector<int64_t> os(batch.begin(), batch.end());
  if (!a1) os.push_back(m);
  if (!b1) os.push_back(n);
  if (is_complex(out)) return tensor_of(r, Shape(os), out);
  std::vector<double> re;
  for (auto& z : r) re.push_back(z.real());
  return tensor_of(re, Shape(os), out);
}

OpSpec matmul_spec() {
  OpSpec s{.op = "matmul", .dtypes = kFloats + kInts + kComplex, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    auto ref = [t](const Tensors& in) { return Tensors{ref_matmul(in[0], in[1], t)}; };
    auto mm = [](const Tensors& in) { return Tensors{matmul(in[0], in[1])}; };
    std::vector<Sample> v{
        {.note = "[3,4] x [4,5]", .inputs = {make({3, 4}, t, g), make({4, 5}, t, g)}, .run = mm, .ref = ref},
        {.note = "[4] x [4,2] and 1-D rules", .inputs = {make({4}, t, g), make({4, 2}, t, g)}, .run = mm, .ref = ref},
        {.note = "[2,3] x [3]", .inputs = {make({2, 3}, t, g), make({3}, t, g)}, .run = mm, .ref = ref},
        {.note = "dot [5] x [5]", .inputs = {make({5}, t, g), make({5}, t, g)},
         .run = [](const Tensors& in) { return Tensors{dot(in[0], in[1])}; }, .ref = ref},
        {.note = "batch broadcast [2,1,2,3] x [3,3,2]", .inputs = {make({2, 1, 2, 3}, t, g), make({3, 3, 2}, t, g)},
         .run = mm, .ref = ref},
        {.note = "transposed x stepped", .inputs = {transposed({3, 4}, t, g), stepped({4, 2}, t, g)}, .run = mm,
         .ref = ref},
        {.note = "permuted batch [2,3,4] x [4,2]", .inputs = {permuted({2, 3, 4}, t, g), make({4, 2}, t, g)},
         .run = mm, .ref = ref},
        {.note = "[3,4] x batch-transposed [2,4,3]", .inputs = {make({3, 4}, t, g), transpose(make({4, 2, 3}, t, g), 0, 1)},
         .run = mm, .ref = ref},
        {.note = "bmm expanded batch", .inputs = {expanded({2, 3, 4}, t, g), make({2, 4, 3}, t, g)},
         .run = [](const Tensors& in) { return Tensors{bmm(in[0], in[1])}; }, .ref = ref},
        {.note = "empty K: [3,0] x [0,4] is zeros", .inputs = {make({3, 0}, t, g), make({0, 4}, t, g)}, .run = mm,
         .ref = ref},
        {.note = "empty M: [0,3] x [3,2]", .inputs = {make({0, 3}, t, g), make({3, 2}, t, g)}, .run = mm, .ref = ref},
        // Sizes past one register tile of the blocked (oneDNN / Eigen) GEMMs.
        {.note = "[17,33] x [33,19]", .inputs = {make({17, 33}, t, g, -1, 1), make({33, 19}, t, g, -1, 1)}, .run = mm,
         .ref = ref, .gradcheck = false, .tol_scale = 8}};
    if (is_floating(t))
      v.push_back({.note = "linear with bias", .inputs = {make({2, 4}, t, g), make({3, 4}, t, g), make({3}, t, g)},
                   .run = [](const Tensors& in) { return Tensors{linear(in[0], in[1], in[2])}; },
                   .ref = [t](const Tensors& in) {
                     Tensor xw = ref_matmul(in[0], transpose(in[1], 0, 1), DType::Float64);
                     return Tensors{map2(xw, in[2], [](double a, double b) { return a + b; }, t)};
                   }});
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("inner dims differ", "matmul", [] { matmul(zeros({2, 3}), zeros({4, 2})); }),
        throws_<ShapeError>("0-d operand", "matmul", [] { matmul(zeros({}), zeros({2})); }),
        throws_<ShapeError>("bmm of 2-D", "bmm", [] { bmm(zeros({2, 3}), zeros({3, 2})); }),
        throws_<NotImplementedError>("bool", "matmul",
                                     [] { matmul(zeros({2, 2}, DType::Bool), zeros({2, 2}, DType::Bool)); })};
  };
  return s;
}
SKIFF_OP_SPEC(matmul_spec());

// A well-conditioned [..., n, n]: random plus n on the diagonal.
Tensor well_conditioned(Shape s, DType t, Generator& g, bool transpose_layout = false) {
  Tensor a = make(s, DType::Float64, g, -1, 1);
  int64_t n = s[s.size() - 1];
  a = add(a, mul(eye(n, n, DType::Float64), double(n)));
  a = detail::cast(a, t);
  return transpose_layout ? transpose(detail::contiguous_copy(transpose(a, -1, -2)), -1, -2) : a;
}

// "" when |x - y| <= tol element-wise (both in float64).
std::string near(const Tensor& x, const Tensor& y, double tol) {
  return compare(detail::cast(x, DType::Float64), detail::cast(y, DType::Float64), tol, tol);
}

double tol_of(DType t) { return t == DType::Float32 ? 2e-4 : 1e-9; }

OpSpec solve_spec() {
  OpSpec s{.op = "solve", .dtypes = kF32F64, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    auto run = [](const Tensors& in) { return Tensors{solve(in[0], in[1])}; };
    // A x = b, with a vector b read as a column.
    auto check = [t](const Tensors& in, const Tensors& out) {
      bool vec = in[1].dim() == 1 || in[1].shape() == Shape(std::vector<int64_t>(in[0].shape().begin(), in[0].shape().end() - 1));
      Tensor x = vec ? unsqueeze(out[0], -1) : out[0];
      Tensor b = vec ? unsqueeze(in[1], -1) : in[1];
      Tensor ax = ref_matmul(in[0], x, DType::Float64);
      return near(ax, expand(b, ax.shape()), tol_of(t));
    };
    return std::vector<Sample>{
        {.note = "[3,3] x [3,2]", .inputs = {well_conditioned({3, 3}, t, g), make({3, 2}, t, g)}, .run = run, .check = check},
        {.note = "vector b [3]", .inputs = {well_conditioned({3, 3}, t, g), make({3}, t, g)}, .run = run, .check = check},
        {.note = "batch broadcast [2,3,3] x [3,1], transposed A",
         .inputs = {well_conditioned({2, 3, 3}, t, g, true), make({3, 1}, t, g)}, .run = run, .check = check},
        {.note = "empty batch [0,2,2]", .inputs = {well_conditioned({0, 2, 2}, t, g), make({0, 2, 1}, t, g)},
         .run = run, .check = check}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("non-square", "solve", [] { solve(zeros({2, 3}), zeros({2})); }),
        throws_<ValueError>("singular", "singular", [] { solve(zeros({2, 2}), zeros({2})); }),
        throws_<TypeError>("int", "solve", [] { solve(zeros({2, 2}, DType::Int32), zeros({2}, DType::Int32)); })};
  };
  return s;
}
SKIFF_OP_SPEC(solve_spec());

OpSpec inverse_spec() {
  OpSpec s{.op = "inverse", .dtypes = kF32F64, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    auto run = [](const Tensors& in) { return Tensors{inverse(in[0])}; };
    auto check = [t](const Tensors& in, const Tensors& out) {
      Tensor p = ref_matmul(in[0], out[0], DType::Float64);
      int64_t n = in[0].shape()[in[0].dim() - 1];
      return near(p, expand(eye(n, n, DType::Float64), p.shape()), tol_of(t));
    };
    return std::vector<Sample>{
        {.note = "[3,3]", .inputs = {well_conditioned({3, 3}, t, g)}, .run = run, .check = check},
        {.note = "[2,4,4] transposed", .inputs = {well_conditioned({2, 4, 4}, t, g, true)}, .run = run, .check = check},
        {.note = "empty batch", .inputs = {well_conditioned({0, 3, 3}, t, g)}, .run = run, .check = check}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("non-square", "inverse", [] { inverse(zeros({2, 3})); }),
        throws_<ValueError>("singular", "singular", [] { inverse(zeros({2, 2})); })};
  };
  return s;
}
SKIFF_OP_SPEC(inverse_spec());

// Symmetric positive definite: M M^T + n I.
Tensor spd(Shape s, DType t, Generator& g) {
  Tensor m = make(s, DType::Float64, g, -1, 1);
  int64_t n = s[s.size() - 1];
  Tensor a = add(ref_matmul(m, transpose(m, -1, -2), DType::Float64), mul(eye(n, n, DType::Float64), double(n)));
  return detail::cast(a, t);
}

OpSpec cholesky_spec() {
  OpSpec s{.op = "cholesky", .dtypes = kF32F64, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    // The gradient is checked on the symmetric part: the op reads only the lower triangle.
    auto run = [](const Tensors& in) { return Tensors{cholesky(mul(add(in[0], transpose(in[0], -1, -2)), 0.5))}; };
    auto check = [t](const Tensors& in, const Tensors& out) {
      const Tensor& l = out[0];
      int64_t n = l.shape()[l.dim() - 1];
      std::vector<double> lv = values(l);
      for (size_t i = 0; i < lv.size(); ++i) {
        auto idx = unravel(int64_t(i), l.shape());
        if (idx[idx.size() - 1] > idx[idx.size() - 2] && lv[i] != 0) return std::string("L is not lower triangular");
      }
      (void)n;
      return near(ref_matmul(l, transpose(l, -1, -2), DType::Float64), in[0], tol_of(t) * 10);
    };
    return std::vector<Sample>{
        {.note = "[3,3]", .inputs = {spd({3, 3}, t, g)}, .run = run, .check = check},
        {.note = "[2,3,3] transposed layout", .inputs = {transpose(spd({2, 3, 3}, t, g), -1, -2)}, .run = run,
         .check = check},
        {.note = "empty batch", .inputs = {spd({0, 2, 2}, t, g)}, .run = run, .check = check}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("non-square", "cholesky", [] { cholesky(zeros({2, 3})); }),
        throws_<ValueError>("not positive definite", "cholesky", [] { cholesky(neg(eye(2, 2))); })};
  };
  return s;
}
SKIFF_OP_SPEC(cholesky_spec());

// det by cofactor expansion along the first row.
double cofactor_det(const std::vector<double>& a, int64_t n) {
  if (n == 0) return 1;
  if (n == 1) return a[0];
  double d = 0;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<double> minor;
    for (int64_t r = 1; r < n; ++r)
      for (int64_t c = 0; c < n; ++c)
        if (c != j) minor.push_back(a[size_t(r * n + c)]);
    d += (j % 2 ? -1 : 1) * a[size_t(j)] * cofactor_det(minor, n - 1);
  }
  return d;
}

OpSpec det_spec() {
  OpSpec s{.op = "det", .dtypes = kF32F64, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    auto run = [](const Tensors& in) { return Tensors{det(in[0])}; };
    auto ref = [t](const Tensors& in) {
      int64_t n = in[0].shape()[in[0].dim() - 1];
      return Tensors{reduce(in[0], {-2, -1}, false, [n](const std::vector<double>& a) { return cofactor_det(a, n); }, t)};
    };
    return std::vector<Sample>{
        {.note = "[3,3]", .inputs = {make({3, 3}, t, g)}, .run = run, .ref = ref, .tol_scale = 10},
        {.note = "[2,4,4] transposed", .inputs = {transposed({2, 4, 4}, t, g)}, .run = run, .ref = ref,
         .tol_scale = 20},
        {.note = "singular gives 0", .inputs = {zeros({2, 2}, t)}, .run = run, .ref = ref, .gradcheck = false},
        {.note = "empty batch", .inputs = {make({0, 2, 2}, t, g)}, .run = run, .ref = ref}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<ShapeError>("non-square", "det", [] { det(zeros({2, 3})); })};
  };
  return s;
}
SKIFF_OP_SPEC(det_spec());

}  // namespace
}  // namespace skiff::spec
