// Specs of the views (reshape, permute, slice, expand, diagonal, restride), the
// data movers (copy, cast, concat) and the backward ops of slice and diagonal.
// Every reference is an index map: which input element lands at each output index.
#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using Idx = std::vector<int64_t>;
const std::vector<DType> kAll = kFloats + kInts + kComplex + std::vector<DType>{DType::Bool};
// Views move no data: a few dtypes of each kind are enough.
const std::vector<DType> kViewTypes{DType::Float32, DType::Float64, DType::Int64, DType::Bool, DType::Complex64};

Sample view_sample(std::string note, Tensor x, std::function<Tensor(const Tensor&)> fn, Shape out,
                   std::function<int64_t(const Idx&)> src) {
  return {.note = std::move(note),
          .inputs = {x},
          .run = [fn](const Tensors& in) { return Tensors{fn(in[0])}; },
          .ref = [out, src](const Tensors& in) { return Tensors{index_map(in[0], out, src, in[0].dtype())}; }};
}

// reshape: row-major order is kept; a strided input is copied first.
OpSpec reshape_spec() {
  OpSpec s{.op = "reshape", .dtypes = kViewTypes, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto flat = [](const Shape& out) { return [out](const Idx& i) { return ravel(i, out); }; };
    return std::vector<Sample>{
        view_sample("[3,4] -> [2,-1]", make({3, 4}, t, g), [](auto& x) { return reshape(x, {2, -1}); }, {2, 6},
                    flat({2, 6})),
        view_sample("transposed [4,3] -> [12]", transposed({4, 3}, t, g), [](auto& x) { return reshape(x, {12}); },
                    {12}, flat({12})),
        view_sample("0-d -> [1,1]", make({}, t, g), [](auto& x) { return reshape(x, {1, 1}); }, {1, 1},
                    flat({1, 1})),
        view_sample("empty [0,3] -> [3,0]", make({0, 3}, t, g), [](auto& x) { return reshape(x, {3, 0}); }, {3, 0},
                    flat({3, 0}))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("element count", "reshape", [] { reshape(zeros({3, 4}), {5, -1}); }),
        throws_<ShapeError>("two -1", "reshape", [] { reshape(zeros({3, 4}), {-1, -1}); })};
  };
  return s;
}
SKIFF_OP_SPEC(reshape_spec());

OpSpec permute_spec() {
  OpSpec s{.op = "permute", .dtypes = kViewTypes, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto perm = [](Shape in, Idx dims) {
      return [in, dims](const Idx& o) {
        Idx i(in.size());
        for (size_t k = 0; k < dims.size(); ++k) i[size_t(dims[k])] = o[k];
        return ravel(i, in);
      };
    };
    return std::vector<Sample>{
        view_sample("[2,3,4] (2,0,1)", make({2, 3, 4}, t, g), [](auto& x) { return permute(x, {2, 0, 1}); },
                    {4, 2, 3}, perm({2, 3, 4}, {2, 0, 1})),
        view_sample("stepped [3,4] transpose", stepped({3, 4}, t, g), [](auto& x) { return transpose(x, 0, 1); },
                    {4, 3}, perm({3, 4}, {1, 0})),
        view_sample("empty [0,3] t()", make({0, 3}, t, g), [](auto& x) { return skiff::t(x); }, {3, 0},
                    perm({0, 3}, {1, 0}))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("repeated dim", "permute", [] { permute(zeros({2, 3}), {0, 0}); }),
        throws_<IndexError>("too few dims", "permute", [] { permute(zeros({2, 3}), {0}); })};
  };
  return s;
}
SKIFF_OP_SPEC(permute_spec());

// slice / narrow / select: Python slicing along one dim.
OpSpec slice_spec() {
  OpSpec s{.op = "slice", .dtypes = kViewTypes, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto along = [](Shape in, int64_t dim, int64_t start, int64_t step) {
      return [in, dim, start, step](const Idx& o) {
        Idx i = o;
        i[size_t(dim)] = start + o[size_t(dim)] * step;
        return ravel(i, in);
      };
    };
    return std::vector<Sample>{
        view_sample("[5,4] dim 0 1:5:2", make({5, 4}, t, g), [](auto& x) { return slice(x, 0, 1, 5, 2); }, {2, 4},
                    along({5, 4}, 0, 1, 2)),
        view_sample("transposed [3,6] dim 1 -4:", transposed({3, 6}, t, g), [](auto& x) { return slice(x, 1, -4, 99); },
                    {3, 4}, along({3, 6}, 1, 2, 1)),
        view_sample("narrow [4,3] dim 1", make({4, 3}, t, g), [](auto& x) { return narrow(x, 1, 1, 2); }, {4, 2},
                    along({4, 3}, 1, 1, 1)),
        view_sample("empty slice 3:3", make({4, 3}, t, g), [](auto& x) { return slice(x, 0, 3, 3); }, {0, 3},
                    along({4, 3}, 0, 3, 1)),
        view_sample("empty input [0,4]", make({0, 4}, t, g), [](auto& x) { return slice(x, 1, 0, 4, 3); }, {0, 2},
                    along({0, 4}, 1, 0, 3))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("step 0", "slice", [] { slice(zeros({3}), 0, 0, 3, 0); }),
        throws_<ShapeError>("0-d", "slice", [] { slice(zeros({}), 0, 0, 1); }),
        throws_<IndexError>("narrow past the end", "narrow", [] { narrow(zeros({3}), 0, 2, 2); })};
  };
  return s;
}
SKIFF_OP_SPEC(slice_spec());

OpSpec expand_spec() {
  OpSpec s{.op = "expand", .dtypes = kViewTypes, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto bcast = [](Shape in) {
      return [in](const Idx& o) {
        Idx i(in.size());
        const size_t n = size_t(in.size()), lead = o.size() - n;
        for (size_t d = 0; d < n; ++d) i[d] = in[d] == 1 ? 0 : o[lead + d];
        return ravel(i, in);
      };
    };
    return std::vector<Sample>{
        view_sample("[3,1] -> [2,3,4]", make({3, 1}, t, g), [](auto& x) { return expand(x, {2, 3, 4}); }, {2, 3, 4},
                    bcast({3, 1})),
        view_sample("stepped [1,3] -> [2,-1,3]", stepped({1, 3}, t, g),
                    [](auto& x) { return expand(x, {2, -1, 3}); }, {2, 1, 3}, bcast({1, 3})),
        view_sample("[1,2] -> [0,2]", make({1, 2}, t, g), [](auto& x) { return expand(x, {0, 2}); }, {0, 2},
                    bcast({1, 2})),
        view_sample("empty [0,1] -> [0,3]", make({0, 1}, t, g), [](auto& x) { return expand(x, {0, 3}); }, {0, 3},
                    bcast({0, 1}))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<ShapeError>("size 3 to 4", "expand", [] { expand(zeros({3}), {4}); }),
                                  throws_<ShapeError>("fewer dims", "expand", [] { expand(zeros({2, 3}), {3}); })};
  };
  return s;
}
SKIFF_OP_SPEC(expand_spec());

// diagonal(x, offset, dim1, dim2): the remaining dims first, then the diagonal.
OpSpec diagonal_spec() {
  OpSpec s{.op = "diagonal", .dtypes = kViewTypes, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto diag2 = [](Shape in, int64_t off) {
      return [in, off](const Idx& o) {
        int64_t k = o[0];
        return ravel(off >= 0 ? Idx{k, k + off} : Idx{k - off, k}, in);
      };
    };
    return std::vector<Sample>{
        view_sample("[3,4]", make({3, 4}, t, g), [](auto& x) { return diagonal(x); }, {3}, diag2({3, 4}, 0)),
        view_sample("[3,4] offset 1", make({3, 4}, t, g), [](auto& x) { return diagonal(x, 1); }, {3},
                    diag2({3, 4}, 1)),
        view_sample("transposed [4,3] offset -1", transposed({4, 3}, t, g), [](auto& x) { return diagonal(x, -1); },
                    {3}, diag2({4, 3}, -1)),
        view_sample("[2,3,3] dims (1,2)", make({2, 3, 3}, t, g), [](auto& x) { return diagonal(x, 0, 1, 2); },
                    {2, 3}, [](const Idx& o) { return ravel({o[0], o[1], o[1]}, {2, 3, 3}); }),
        view_sample("empty [0,3]", make({0, 3}, t, g), [](auto& x) { return diagonal(x); }, {0},
                    diag2({0, 3}, 0))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("1-d", "diagonal", [] { diagonal(zeros({3})); }),
        throws_<IndexError>("equal dims", "diagonal", [] { diagonal(zeros({3, 3}), 0, 1, 1); })};
  };
  return s;
}
SKIFF_OP_SPEC(diagonal_spec());

// restride: squeeze(x, dim) / unsqueeze(x, dim), which keep any strides.
OpSpec restride_spec() {
  OpSpec s{.op = "restride", .dtypes = kViewTypes, .grad = true};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        view_sample("unsqueeze [3,4] at 1", make({3, 4}, t, g), [](auto& x) { return unsqueeze(x, 1); }, {3, 1, 4},
                    [](const Idx& o) { return ravel({o[0], o[2]}, {3, 4}); }),
        view_sample("unsqueeze transposed at -1", transposed({2, 3}, t, g), [](auto& x) { return unsqueeze(x, -1); },
                    {2, 3, 1}, [](const Idx& o) { return ravel({o[0], o[1]}, {2, 3}); }),
        view_sample("squeeze stepped [3,1,2] dim 1", stepped({3, 1, 2}, t, g),
                    [](auto& x) { return squeeze(x, 1); }, {3, 2},
                    [](const Idx& o) { return ravel({o[0], 0, o[1]}, {3, 1, 2}); }),
        view_sample("unsqueeze empty [0]", make({0}, t, g), [](auto& x) { return unsqueeze(x, 0); }, {1, 0},
                    [](const Idx&) { return int64_t(-1); })};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<IndexError>("dim out of range", "unsqueeze", [] { unsqueeze(zeros({3}), 3); })};
  };
  return s;
}
SKIFF_OP_SPEC(restride_spec());

// copy: contiguous() of a strided tensor and clone().
OpSpec copy_spec() {
  OpSpec s{.op = "copy", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto same = [](Shape sh) { return [sh](const Idx& i) { return ravel(i, sh); }; };
    return std::vector<Sample>{
        view_sample("contiguous(transposed [5,13])", transposed({5, 13}, t, g), [](auto& x) { return contiguous(x); },
                    {5, 13}, same({5, 13})),
        view_sample("clone(expanded [3,4])", expanded({3, 4}, t, g), [](auto& x) { return clone(x); }, {3, 4},
                    same({3, 4})),
        view_sample("contiguous(permuted [2,3,4,5])", permuted({2, 3, 4, 5}, t, g),
                    [](auto& x) { return contiguous(x); }, {2, 3, 4, 5}, same({2, 3, 4, 5})),
        view_sample("clone(stepped [2,3])", stepped({2, 3}, t, g), [](auto& x) { return clone(x); }, {2, 3},
                    same({2, 3})),
        view_sample("clone 0-d", make({}, t, g), [](auto& x) { return clone(x); }, {}, same({})),
        view_sample("clone empty", make({0, 2}, t, g), [](auto& x) { return clone(x); }, {0, 2}, same({0, 2}))};
  };
  return s;
}
SKIFF_OP_SPEC(copy_spec());

// cast: to(x, dtype) converts like static_cast (floats truncate toward zero into
// integers, non-zero is true, a complex number keeps its real part).
OpSpec cast_spec() {
  OpSpec s{.op = "cast", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    const std::vector<DType> targets{DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32,
                                     DType::UInt8,   DType::Bool,    DType::Complex64, DType::Complex128};
    for (DType to_t : targets) {
      if (to_t == t) continue;
      // Values that fit every target: [0, 3) for an unsigned destination.
      double lo = to_t == DType::UInt8 ? 0 : -3;
      Tensor x = to_t == DType::Int32 || to_t == DType::UInt8 ? stepped({3, 5}, t, g, lo, 3) : make({3, 5}, t, g, lo, 3);
      v.push_back({.note = "to " + std::string(dtype_name(to_t)),
                   .inputs = {x},
                   .run = [to_t](const Tensors& in) { return Tensors{to(in[0], to_t)}; },
                   .ref = [to_t, t](const Tensors& in) {
                     if (is_complex(to_t)) return Tensors{map1c(in[0], [](std::complex<double> z) { return z; }, to_t)};
                     auto f = to_t == DType::Bool ? Scalar1([](double x) { return double(x != 0); })
                                                  : is_integral(to_t) ? Scalar1([](double x) { return std::trunc(x); })
                                                                      : Scalar1([](double x) { return x; });
                     if (to_t == DType::Bool && is_complex(t))
                       return Tensors{map1c(in[0], [](std::complex<double> z) { return std::complex<double>(z != 0.0); },
                                            DType::Bool)};
                     return Tensors{map1(in[0], f, to_t)};
                   },
                   // float64 -> complex128 only: a finite difference through a float32
                   // result would measure float32 rounding, not the gradient.
                   .gradcheck = to_t == DType::Complex128});
    }
    v.push_back({.note = "empty to float64", .inputs = {make({0, 3}, t, g)},
                 .run = [](const Tensors& in) { return Tensors{to(in[0], DType::Float64)}; },
                 .ref = [](const Tensors& in) { return Tensors{zeros({0, 3}, DType::Float64)}; }});
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(cast_spec());

// concat along an existing dim; pieces may be strided or empty.
OpSpec concat_spec() {
  OpSpec s{.op = "concat", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto ref = [t](int64_t dim) {
      return [t, dim](const Tensors& in) {
        Shape out = in[0].shape();
        out[size_t(dim)] = 0;
        for (auto& x : in) out[size_t(dim)] += x.shape()[size_t(dim)];
        // Concatenate the flat values of each piece, then map each output index to its piece.
        std::vector<std::complex<double>> all;
        std::vector<int64_t> start;
        for (auto& x : in) {
          start.push_back(int64_t(all.size()));
          auto c = cvalues(x);
          if (!is_complex(x.dtype())) {
            auto r = values(x);
            for (size_t i = 0; i < r.size(); ++i) c[i] = r[i];
          }
          all.insert(all.end(), c.begin(), c.end());
        }
        Tensor pool = tensor_of(all, {int64_t(all.size())}, is_complex(t) ? t : DType::Complex128);
        return Tensors{index_map(pool, out, [&in, &start, dim](const Idx& o) {
          int64_t k = o[size_t(dim)];
          for (size_t p = 0; p < in.size(); ++p) {
            int64_t n = in[p].shape()[size_t(dim)];
            if (k < n) {
              Idx i = o;
              i[size_t(dim)] = k;
              return start[p] + ravel(i, in[p].shape());
            }
            k -= n;
          }
          return int64_t(-1);
        }, t)};
      };
    };
    auto run = [](int64_t dim) { return [dim](const Tensors& in) { return Tensors{concat(in, dim)}; }; };
    return std::vector<Sample>{
        {.note = "dim 0 [2,3]+[1,3]", .inputs = {make({2, 3}, t, g), make({1, 3}, t, g)}, .run = run(0), .ref = ref(0)},
        {.note = "dim 1 transposed + stepped + empty",
         .inputs = {transposed({2, 3}, t, g), stepped({2, 2}, t, g), make({2, 0}, t, g)},
         .run = run(1),
         .ref = ref(1)},
        {.note = "empty pieces", .inputs = {make({0, 3}, t, g), make({0, 3}, t, g)}, .run = run(0), .ref = ref(0)}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("rank mismatch", "concat", [] { concat({zeros({2, 3}), zeros({3})}); }),
        throws_<ShapeError>("size mismatch", "concat", [] { concat({zeros({2, 3}), zeros({2, 4})}, 0); }),
        throws_<ValueError>("no tensors", "concat", [] { concat({}); })};
  };
  return s;
}
SKIFF_OP_SPEC(concat_spec());

// The backward ops of slice and diagonal: the gradient of the view written into
// zeros of the input's shape. Their samples differentiate the view.
Sample backward_sample(std::string note, Tensor x, Tensor gout, std::function<Tensor(const Tensor&)> view,
                       std::function<int64_t(const Idx&)> dst_to_src) {
  return {.note = std::move(note),
          .inputs = {x, gout},
          .run = [view](const Tensors& in) {
            Tensor leaf = in[0].requires_grad() ? in[0] : detail::contiguous_copy(in[0]).set_requires_grad();
            return autograd::grad({view(leaf)}, {leaf}, {in[1]}, /*create_graph=*/true);
          },
          .ref = [dst_to_src](const Tensors& in) {
            return Tensors{index_map(in[1], in[0].shape(), dst_to_src, in[1].dtype())};
          }};
}

OpSpec slice_backward_spec() {
  // Autograd only differentiates float and complex tensors: the kernel's integer and
  // bool dtypes are never reached.
  OpSpec s{.op = "slice_backward", .dtypes = kFloats + kComplex, .grad = true, .backward_of = "slice"};
  s.unreachable_dtypes = kInts + std::vector<DType>{DType::Bool};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        backward_sample("[5,4] dim 0 1:5:2", make({5, 4}, t, g), transposed({2, 4}, t, g),
                        [](auto& x) { return slice(x, 0, 1, 5, 2); },
                        [](const Idx& i) { return i[0] % 2 == 1 ? ravel({i[0] / 2, i[1]}, {2, 4}) : int64_t(-1); }),
        backward_sample("empty slice", make({3, 2}, t, g), make({0, 2}, t, g),
                        [](auto& x) { return slice(x, 0, 1, 1); }, [](const Idx&) { return int64_t(-1); })};
  };
  return s;
}
SKIFF_OP_SPEC(slice_backward_spec());

OpSpec diagonal_backward_spec() {
  OpSpec s{.op = "diagonal_backward", .dtypes = kFloats + kComplex, .grad = true, .backward_of = "diagonal"};
  s.unreachable_dtypes = kInts + std::vector<DType>{DType::Bool};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        backward_sample("[3,4] offset 1", make({3, 4}, t, g), stepped({3}, t, g),
                        [](auto& x) { return diagonal(x, 1); },
                        [](const Idx& i) { return i[1] == i[0] + 1 ? i[0] : int64_t(-1); }),
        backward_sample("empty [0,3]", make({0, 3}, t, g), make({0}, t, g), [](auto& x) { return diagonal(x); },
                        [](const Idx&) { return int64_t(-1); })};
  };
  return s;
}
SKIFF_OP_SPEC(diagonal_backward_spec());

}  // namespace
}  // namespace skiff::spec
