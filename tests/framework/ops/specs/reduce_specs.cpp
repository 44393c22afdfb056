// Specs of the reductions: each names its public call and the plain loop over a
// group of values it must equal, over the same dims / layouts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using cd = std::complex<double>;
using Dims = std::vector<int64_t>;

struct ReduceInput {
  std::string note;
  Tensor x;
  Dims dims;
  bool keepdim = false;
};

// All dims, one dim, two dims kept, a negative dim, strided layouts, and an
// empty tensor reduced over its non-empty dim ([0,3] -> [0]).
std::vector<ReduceInput> reduce_inputs(DType t, Generator& g, double lo, double hi, bool zero_d = true) {
  std::vector<ReduceInput> v{{"[2,3,4] all", make({2, 3, 4}, t, g, lo, hi), {}},
                             {"[2,3,4] dim 1", make({2, 3, 4}, t, g, lo, hi), {1}},
                             {"[2,3,4] dims 0,2 keepdim", make({2, 3, 4}, t, g, lo, hi), {0, 2}, true},
                             {"[5,33] dim -1", make({5, 33}, t, g, lo, hi), {-1}},
                             {"transposed [4,6] dim 0", transposed({4, 6}, t, g, lo, hi), {0}},
                             {"stepped [3,5] dim 1", stepped({3, 5}, t, g, lo, hi), {1}},
                             {"expanded [3,4] dim 0", expanded({3, 4}, t, g, lo, hi), {0}},
                             {"permuted [2,3,4] dim 1", permuted({2, 3, 4}, t, g, lo, hi), {1}},
                             {"permuted [3,2,5] dims 0,2", permuted({3, 2, 5}, t, g, lo, hi), {0, 2}},
                             {"empty [0,3] dim 1", make({0, 3}, t, g, lo, hi), {1}}};
  if (zero_d) {
    v.push_back({"0-d", make({}, t, g, lo, hi), {}});
    // A 0-d tensor reduced over its implicit dim (0 or -1) is itself, as in PyTorch.
    v.push_back({"0-d dim 0", make({}, t, g, lo, hi), {0}});
    v.push_back({"0-d dim -1 keepdim", make({}, t, g, lo, hi), {-1}, true});
  }
  return v;
}

using Group = std::function<double(const std::vector<double>&)>;
using GroupC = std::function<cd(const std::vector<cd>&)>;
using ReduceFn = std::function<Tensor(const Tensor&, const Dims&, bool)>;

struct Reduction {
  std::string op;
  std::vector<DType> dtypes;
  ReduceFn fn;
  Group ref;
  GroupC cref = nullptr;
  double lo = -2, hi = 2;
  bool gradgrad = true;
  bool int_to_int64 = false;  ///< integer and bool inputs accumulate and return int64
  bool empty_dim = false;     ///< reducing a size-0 dim is allowed (gives the identity)
  bool zero_d = true;
};

OpSpec reduction_spec(Reduction r) {
  OpSpec s{.op = r.op, .dtypes = r.dtypes, .grad = true, .gradgrad = r.gradgrad};
  s.samples = [r](DType t, Generator& g) {
    DType out = r.int_to_int64 && !is_differentiable(t) ? DType::Int64 : t;
    auto inputs = reduce_inputs(t, g, r.lo, r.hi, r.zero_d);
    if (r.empty_dim) inputs.push_back({"empty [0,3] dim 0", make({0, 3}, t, g), {0}});
    std::vector<Sample> v;
    for (auto& in : inputs) {
      auto dims = in.dims;
      bool keep = in.keepdim;
      v.push_back({.note = in.note,
                   .inputs = {in.x},
                   .run = [f = r.fn, dims, keep](const Tensors& x) { return Tensors{f(x[0], dims, keep)}; },
                   .ref = [r, dims, keep, out, t](const Tensors& x) {
                     if (is_complex(t)) return Tensors{reducec(x[0], dims, keep, r.cref, out)};
                     return Tensors{reduce(x[0], dims, keep, r.ref, out)};
                   },
                   .tol_scale = 4});
    }
    return v;
  };
  s.errors = [r] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("dim out of range", "dimension 3 out of range", [f = r.fn] { f(zeros({2, 3}), {3}, false); })};
  };
  return s;
}

double sum_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
cd csum_of(const std::vector<cd>& v) { return std::accumulate(v.begin(), v.end(), cd(0)); }
const std::vector<DType> kAll = kFloats + kInts + kComplex + std::vector<DType>{DType::Bool};
const std::vector<DType> kOrdered = kFloats + kInts + std::vector<DType>{DType::Bool};

// Half-precision inputs keep to [-1, 1] so 132-element sums stay far from float16's range.
SKIFF_OP_SPEC(reduction_spec({.op = "sum", .dtypes = kAll,
                              .fn = [](auto& x, auto& d, bool k) { return sum(x, d, k); },
                              .ref = sum_of, .cref = csum_of, .lo = -1, .hi = 1, .gradgrad = false,
                              .int_to_int64 = true, .empty_dim = true}));
SKIFF_OP_SPEC(reduction_spec({.op = "prod", .dtypes = kAll,
                              .fn = [](auto& x, auto& d, bool k) { return prod(x, d, k); },
                              .ref = [](const std::vector<double>& v) {
                                return std::accumulate(v.begin(), v.end(), 1.0, std::multiplies<>());
                              },
                              .cref = [](const std::vector<cd>& v) {
                                return std::accumulate(v.begin(), v.end(), cd(1), std::multiplies<>());
                              },
                              .lo = 0.7, .hi = 1.3, .int_to_int64 = true, .empty_dim = true}));

OpSpec extreme_spec(std::string op, bool is_max) {
  OpSpec s = reduction_spec(
      {.op = op, .dtypes = kOrdered,
       .fn = [is_max](auto& x, auto& d, bool k) { return is_max ? amax(x, d, k) : amin(x, d, k); },
       .ref = [is_max](const std::vector<double>& v) {
         return is_max ? *std::max_element(v.begin(), v.end()) : *std::min_element(v.begin(), v.end());
       },
       .gradgrad = false});
  auto base = s.errors;
  s.errors = [base, op, is_max] {
    auto v = base();
    v.push_back(throws_<ValueError>("empty dim", op, [is_max] { is_max ? amax(zeros({0, 3}), {0}) : amin(zeros({0, 3}), {0}); }));
    v.push_back(throws_<TypeError>("complex", op, [is_max] {
      is_max ? amax(zeros({2}, DType::Complex64)) : amin(zeros({2}, DType::Complex64));
    }));
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(extreme_spec("amax", true));
SKIFF_OP_SPEC(extreme_spec("amin", false));

// var with the population (0) and the sample (1) correction.
OpSpec var_spec() {
  OpSpec s = reduction_spec({.op = "var", .dtypes = kFloats,
                             .fn = [](auto& x, auto& d, bool k) { return var(x, d, 1, k); },
                             .ref = [](const std::vector<double>& v) {
                               double m = sum_of(v) / double(v.size()), ss = 0;
                               for (double e : v) ss += (e - m) * (e - m);
                               return ss / double(v.size() - 1);
                             },
                             .zero_d = false});
  auto base = s.samples;
  s.samples = [base](DType t, Generator& g) {
    auto v = base(t, g);
    v.push_back({.note = "correction 0, dim 0",
                 .inputs = {make({5, 3}, t, g)},
                 .run = [](const Tensors& x) { return Tensors{var(x[0], {0}, 0)}; },
                 .ref = [t](const Tensors& x) {
                   return Tensors{reduce(x[0], {0}, false, [](const std::vector<double>& v) {
                     double m = sum_of(v) / double(v.size()), ss = 0;
                     for (double e : v) ss += (e - m) * (e - m);
                     return ss / double(v.size());
                   }, t)};
                 }});
    return v;
  };
  auto errs = s.errors;
  s.errors = [errs] {
    auto v = errs();
    v.push_back(throws_<ValueError>("negative correction", "var", [] { var(zeros({3}), {}, -1); }));
    v.push_back(throws_<TypeError>("complex", "var", [] { var(zeros({3}, DType::Complex64)); }));
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(var_spec());

// p-norms: 2 by default; 1, 3 and inf in extra samples.
OpSpec norm_spec() {
  auto pnorm = [](double p) {
    return [p](const std::vector<double>& v) {
      double acc = 0;
      for (double e : v) acc = std::isinf(p) ? std::max(acc, std::abs(e)) : acc + std::pow(std::abs(e), p);
      return std::isinf(p) ? acc : std::pow(acc, 1 / p);
    };
  };
  OpSpec s = reduction_spec({.op = "norm", .dtypes = kFloats,
                             .fn = [](auto& x, auto& d, bool k) { return norm(x, 2.0, d, k); },
                             .ref = pnorm(2)});
  auto base = s.samples;
  s.samples = [base, pnorm](DType t, Generator& g) {
    auto v = base(t, g);
    for (double p : {1.0, 3.0, double(INFINITY)})
      v.push_back({.note = "p = " + std::to_string(p) + ", dim 1",
                   .inputs = {make({3, 5}, t, g)},
                   .run = [p](const Tensors& x) { return Tensors{norm(x[0], p, {1})}; },
                   .ref = [p, t, pnorm](const Tensors& x) { return Tensors{reduce(x[0], {1}, false, pnorm(p), t)}; },
                   .tol_scale = 4});
    return v;
  };
  auto errs = s.errors;
  s.errors = [errs] {
    auto v = errs();
    v.push_back(throws_<ValueError>("p = nan", "norm", [] { norm(zeros({3}), NAN); }));
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(norm_spec());

SKIFF_OP_SPEC(reduction_spec({.op = "logsumexp", .dtypes = kFloats,
                              .fn = [](auto& x, auto& d, bool k) { return logsumexp(x, d, k); },
                              .ref = [](const std::vector<double>& v) {
                                double m = *std::max_element(v.begin(), v.end()), acc = 0;
                                for (double e : v) acc += std::exp(e - m);
                                return m + std::log(acc);
                              }}));

// max / min along one dim: the value and the first position that holds it.
OpSpec extreme_dim_spec(std::string op, bool is_max) {
  OpSpec s{.op = op, .dtypes = kOrdered, .grad = true};
  s.samples = [is_max](DType t, Generator& g) {
    std::vector<Sample> v;
    for (auto& in : reduce_inputs(t, g, -2, 2, false)) {
      if (in.dims.size() != 1) continue;
      int64_t dim = in.dims[0];
      bool keep = in.note.find("keepdim") != std::string::npos;
      v.push_back({.note = in.note,
                   .inputs = {in.x},
                   .run = [is_max, dim, keep](const Tensors& x) {
                     ValuesIndices r = is_max ? max(x[0], dim, keep) : min(x[0], dim, keep);
                     return Tensors{r.values, r.indices};
                   },
                   .ref = [is_max, dim, keep, t](const Tensors& x) {
                     // max_element / min_element return the first extreme: the first position.
                     Tensor vals = reduce(x[0], {dim}, keep, [is_max](const std::vector<double>& g) {
                       return is_max ? *std::max_element(g.begin(), g.end()) : *std::min_element(g.begin(), g.end());
                     }, t);
                     Tensor idx = reduce(x[0], {dim}, keep, [is_max](const std::vector<double>& g) {
                       auto it = is_max ? std::max_element(g.begin(), g.end()) : std::min_element(g.begin(), g.end());
                       return double(it - g.begin());
                     }, DType::Int64);
                     return Tensors{vals, idx};
                   }});
    }
    v.push_back({.note = "keepdim dim 0", .inputs = {make({4, 3}, t, g)},
                 .run = [is_max](const Tensors& x) {
                   ValuesIndices r = is_max ? max(x[0], 0, true) : min(x[0], 0, true);
                   return Tensors{r.values, r.indices};
                 },
                 .ref = [is_max, t](const Tensors& x) {
                   auto pick = [is_max](const std::vector<double>& g) {
                     return is_max ? std::max_element(g.begin(), g.end()) : std::min_element(g.begin(), g.end());
                   };
                   return Tensors{reduce(x[0], {0}, true, [pick](auto& g) { return *pick(g); }, t),
                                  reduce(x[0], {0}, true, [pick](auto& g) { return double(pick(g) - g.begin()); },
                                         DType::Int64)};
                 }});
    return v;
  };
  s.errors = [is_max] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("dim out of range", "out of range", [is_max] { is_max ? max(zeros({2}), 1) : min(zeros({2}), 1); }),
        throws_<ValueError>("empty dim", is_max ? "max" : "min",
                            [is_max] { is_max ? max(zeros({0, 2}), 0) : min(zeros({0, 2}), 0); })};
  };
  return s;
}
SKIFF_OP_SPEC(extreme_dim_spec("max_dim", true));
SKIFF_OP_SPEC(extreme_dim_spec("min_dim", false));

// cumsum: a running sum along dim, int64 for integer and bool inputs.
OpSpec cumsum_spec() {
  OpSpec s{.op = "cumsum", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    DType out = is_differentiable(t) ? t : DType::Int64;
    auto ref = [out](int64_t dim) {
      return [out, dim](const Tensors& x) {
        const Shape& sh = x[0].shape();
        int64_t d = wrap_dim(dim, x[0].dim());
        std::vector<cd> v = cvalues(x[0]);
        if (!is_complex(x[0].dtype())) {
          auto r = values(x[0]);
          for (size_t i = 0; i < r.size(); ++i) v[i] = r[i];
        }
        for (int64_t i = 0; i < sh.numel(); ++i) {
          auto idx = unravel(i, sh);
          if (idx[size_t(d)] == 0) continue;
          idx[size_t(d)] -= 1;
          v[size_t(i)] += v[size_t(ravel(idx, sh))];  // row-major: the predecessor is already summed
        }
        if (is_complex(out)) return Tensors{tensor_of(v, sh, out)};
        std::vector<double> re;
        for (auto& z : v) re.push_back(z.real());
        return Tensors{tensor_of(re, sh, out)};
      };
    };
    std::vector<Sample> v;
    for (auto& in : reduce_inputs(t, g, -1, 1, false)) {
      if (in.dims.size() != 1) continue;
      int64_t dim = in.dims[0];
      v.push_back({.note = in.note, .inputs = {in.x},
                   .run = [dim](const Tensors& x) { return Tensors{cumsum(x[0], dim)}; }, .ref = ref(dim),
                   .tol_scale = 4});
    }
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<IndexError>("dim out of range", "out of range", [] { cumsum(zeros({2}), 1); })};
  };
  return s;
}
SKIFF_OP_SPEC(cumsum_spec());

}  // namespace
}  // namespace skiff::spec
