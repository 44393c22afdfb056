// Specs of the indexing ops (gather / scatter / index_select / index_add /
// embedding / one_hot) and of sort / topk. References are loops over the index
// tensor in row-major order (which is also the documented order for duplicates);
// sort and topk are compared with std::stable_sort of each line.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using cd = std::complex<double>;
using V = std::vector<int64_t>;
const std::vector<DType> kAll = kFloats + kInts + kComplex + std::vector<DType>{DType::Bool};
const std::vector<DType> kNumeric = kFloats + kInts + kComplex;

std::vector<cd> any_values(const Tensor& x) {
  std::vector<cd> v = cvalues(x);
  if (!is_complex(x.dtype())) {
    auto r = values(x);
    for (size_t i = 0; i < r.size(); ++i) v[i] = r[i];
  }
  return v;
}
Tensor any_tensor(const std::vector<cd>& v, const Shape& s, DType t) {
  if (is_complex(t)) return tensor_of(v, s, t);
  std::vector<double> r;
  for (auto& z : v) r.push_back(z.real());
  return tensor_of(r, s, t);
}

// Random int64 positions in [0, n).
Tensor positions(const Shape& s, int64_t n, Generator& g) { return randint(0, std::max<int64_t>(n, 1), s, DType::Int64, &g); }

// ---- gather / scatter / scatter_add -------------------------------------------------------

Tensor ref_gather(const Tensor& x, int64_t dim, const Tensor& index, DType t) {
  std::vector<cd> xv = any_values(x), out;
  std::vector<double> iv = values(index);
  for (int64_t i = 0; i < index.numel(); ++i) {
    V p = unravel(i, index.shape());
    p[size_t(dim)] = int64_t(iv[size_t(i)]);
    out.push_back(xv[size_t(ravel(p, x.shape()))]);
  }
  return any_tensor(out, index.shape(), t);
}

// scatter (add = false: the last write wins) / scatter_add, in row-major order of index.
Tensor ref_scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, bool add, DType t) {
  std::vector<cd> out = any_values(x), sv = any_values(src);
  std::vector<double> iv = values(index);
  for (int64_t i = 0; i < index.numel(); ++i) {
    V p = unravel(i, index.shape());
    cd v = sv[size_t(ravel(p, src.shape()))];
    p[size_t(dim)] = int64_t(iv[size_t(i)]);
    cd& o = out[size_t(ravel(p, x.shape()))];
    o = add ? o + v : v;
  }
  return any_tensor(out, x.shape(), t);
}

OpSpec gather_spec() {
  OpSpec s{.op = "gather", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensor x, int64_t dim, Tensor idx) {
      return Sample{.note = std::move(note), .inputs = {x, idx},
                    .run = [dim](const Tensors& in) { return Tensors{gather(in[0], dim, in[1])}; },
                    .ref = [dim, t](const Tensors& in) { return Tensors{ref_gather(in[0], dim, in[1], t)}; }};
    };
    return std::vector<Sample>{sample("[3,4] dim 0", make({3, 4}, t, g), 0, positions({2, 4}, 3, g)),
                               sample("[3,4] dim 1, smaller index", make({3, 4}, t, g), 1, positions({2, 3}, 4, g)),
                               sample("transposed x, stepped index", transposed({3, 5}, t, g), 1,
                                      stepped({3, 4}, DType::Int64, g, 0, 4)),
                               sample("empty index", make({3, 4}, t, g), 0, positions({0, 4}, 3, g))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("index out of range", "gather", [] { gather(zeros({3}), 0, full({1}, 3, DType::Int64)); }),
        throws_<TypeError>("int32 index", "gather", [] { gather(zeros({3}), 0, zeros({1}, DType::Int32)); }),
        throws_<ShapeError>("rank mismatch", "gather", [] { gather(zeros({3, 2}), 0, zeros({1}, DType::Int64)); })};
  };
  return s;
}
SKIFF_OP_SPEC(gather_spec());

OpSpec scatter_spec(std::string op, bool add) {
  OpSpec s{.op = op, .dtypes = add ? kNumeric : kAll, .grad = true};
  s.samples = [add](DType t, Generator& g) {
    auto sample = [t, add](std::string note, Tensor x, int64_t dim, Tensor idx, Tensor src) {
      return Sample{.note = std::move(note), .inputs = {x, idx, src},
                    .run = [dim, add](const Tensors& in) {
                      return Tensors{add ? scatter_add(in[0], dim, in[1], in[2]) : scatter(in[0], dim, in[1], in[2])};
                    },
                    .ref = [dim, t, add](const Tensors& in) {
                      return Tensors{ref_scatter(in[0], dim, in[1], in[2], add, t)};
                    },
                    // Duplicate positions make scatter's gradient depend on which write wins.
                    .gradcheck = add};
    };
    Sample unique = sample("[3,2] dim 0, distinct positions", make({3, 2}, t, g), 0,
                           from_vector<int64_t>({2, 0, 0, 1, 1, 2}, {3, 2}), make({3, 2}, t, g));
    unique.gradcheck = true;
    return std::vector<Sample>{
        unique,
        sample("[3,4] dim 0 with duplicates", make({3, 4}, t, g), 0, positions({4, 4}, 3, g), make({4, 4}, t, g)),
        sample("[3,5] dim 1, larger src", make({3, 5}, t, g), 1, positions({2, 3}, 5, g), make({3, 4}, t, g)),
        sample("transposed x, expanded src", transposed({4, 3}, t, g), 1, positions({4, 2}, 3, g),
               expanded({4, 2}, t, g)),
        sample("empty index", make({3, 4}, t, g), 0, positions({0, 4}, 3, g), make({0, 4}, t, g))};
  };
  s.errors = [op, add] {
    auto f = [add](const Tensor& x, const Tensor& i, const Tensor& s) { add ? scatter_add(x, 0, i, s) : scatter(x, 0, i, s); };
    return std::vector<ErrorCase>{
        throws_<IndexError>("index out of range", op, [f] { f(zeros({3}), full({1}, -1, DType::Int64), zeros({1})); }),
        throws_<TypeError>("float index", op, [f] { f(zeros({3}), zeros({1}), zeros({1})); })};
  };
  return s;
}
SKIFF_OP_SPEC(scatter_spec("scatter", false));
SKIFF_OP_SPEC(scatter_spec("scatter_add", true));

// ---- index_select / index_add / embedding -------------------------------------------------

OpSpec index_select_spec() {
  OpSpec s{.op = "index_select", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensor x, int64_t dim, Tensor idx) {
      return Sample{.note = std::move(note), .inputs = {x, idx},
                    .run = [dim](const Tensors& in) { return Tensors{index_select(in[0], dim, in[1])}; },
                    .ref = [dim, t](const Tensors& in) {
                      Shape os = in[0].shape();
                      os[size_t(dim)] = in[1].numel();
                      std::vector<double> iv = values(in[1]);
                      return Tensors{index_map(in[0], os, [&](const V& o) {
                        V p = o;
                        p[size_t(dim)] = int64_t(iv[size_t(o[size_t(dim)])]);
                        return ravel(p, in[0].shape());
                      }, t)};
                    }};
    };
    return std::vector<Sample>{sample("[4,3] dim 0 repeats", make({4, 3}, t, g), 0, positions({6}, 4, g)),
                               sample("transposed dim 1", transposed({3, 5}, t, g), 1, positions({2}, 5, g)),
                               sample("empty index", make({4, 3}, t, g), 1, positions({0}, 3, g))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("index out of range", "index_select",
                            [] { index_select(zeros({3}), 0, full({1}, 5, DType::Int64)); }),
        throws_<ShapeError>("2-D index", "index_select", [] { index_select(zeros({3}), 0, zeros({1, 1}, DType::Int64)); })};
  };
  return s;
}
SKIFF_OP_SPEC(index_select_spec());

OpSpec index_add_spec() {
  OpSpec s{.op = "index_add", .dtypes = kNumeric, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensor x, int64_t dim, Tensor idx, Tensor src) {
      return Sample{.note = std::move(note), .inputs = {x, idx, src},
                    .run = [dim](const Tensors& in) { return Tensors{index_add(in[0], dim, in[1], in[2])}; },
                    .ref = [dim, t](const Tensors& in) {
                      std::vector<cd> out = any_values(in[0]), sv = any_values(in[2]);
                      std::vector<double> iv = values(in[1]);
                      for (int64_t i = 0; i < in[2].numel(); ++i) {
                        V p = unravel(i, in[2].shape());
                        p[size_t(dim)] = int64_t(iv[size_t(p[size_t(dim)])]);
                        out[size_t(ravel(p, in[0].shape()))] += sv[size_t(i)];
                      }
                      return Tensors{any_tensor(out, in[0].shape(), t)};
                    }};
    };
    return std::vector<Sample>{
        sample("[4,3] dim 0 duplicates", make({4, 3}, t, g), 0, positions({5}, 4, g), make({5, 3}, t, g)),
        sample("transposed x, stepped src, dim 1", transposed({3, 4}, t, g), 1, positions({2}, 4, g),
               stepped({3, 2}, t, g)),
        sample("empty index", make({4, 3}, t, g), 0, positions({0}, 4, g), make({0, 3}, t, g))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<IndexError>("index out of range", "index_add", [] {
      index_add(zeros({3}), 0, full({1}, 3, DType::Int64), zeros({1}));
    })};
  };
  return s;
}
SKIFF_OP_SPEC(index_add_spec());

OpSpec embedding_spec() {
  OpSpec s{.op = "embedding", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto ref = [t](const Tensors& in) {
      const int64_t d = in[0].shape()[1];
      std::vector<int64_t> os(in[1].shape().begin(), in[1].shape().end());
      os.push_back(d);
      std::vector<double> iv = values(in[1]);
      return Tensors{index_map(in[0], Shape(os), [&](const V& o) {
        V lead(o.begin(), o.end() - 1);
        return int64_t(iv[size_t(ravel(lead, in[1].shape()))]) * d + o.back();
      }, t)};
    };
    auto run = [](const Tensors& in) { return Tensors{embedding(in[0], in[1])}; };
    return std::vector<Sample>{
        {.note = "[5,3] by [2,4]", .inputs = {make({5, 3}, t, g), positions({2, 4}, 5, g)}, .run = run, .ref = ref},
        {.note = "transposed weight, 0-d index", .inputs = {transposed({4, 3}, t, g), positions({}, 4, g)}, .run = run,
         .ref = ref},
        {.note = "padding_idx 1 (same values)", .inputs = {make({4, 2}, t, g), positions({3}, 4, g)},
         .run = [](const Tensors& in) { return Tensors{embedding(in[0], in[1], 1)}; }, .ref = ref,
         .gradcheck = false},  // row 1's gradient is zero by design
        {.note = "empty indices", .inputs = {make({4, 2}, t, g), positions({0}, 4, g)}, .run = run, .ref = ref}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("index out of range", "embedding", [] { embedding(zeros({3, 2}), full({1}, 3, DType::Int64)); }),
        throws_<ShapeError>("1-D weight", "embedding", [] { embedding(zeros({3}), zeros({1}, DType::Int64)); }),
        throws_<TypeError>("int32 indices", "embedding", [] { embedding(zeros({3, 2}), zeros({1}, DType::Int32)); })};
  };
  return s;
}
SKIFF_OP_SPEC(embedding_spec());

OpSpec one_hot_spec() {
  OpSpec s{.op = "one_hot", .dtypes = {DType::Int64}};
  s.samples = [](DType, Generator& g) {
    auto sample = [](std::string note, Tensor idx, int64_t n) {
      return Sample{.note = std::move(note), .inputs = {idx},
                    .run = [n](const Tensors& in) { return Tensors{one_hot(in[0], n)}; },
                    .ref = [n](const Tensors& in) {
                      std::vector<double> iv = values(in[0]);
                      int64_t c = n;
                      if (c < 0) c = iv.empty() ? 0 : int64_t(*std::max_element(iv.begin(), iv.end())) + 1;
                      std::vector<int64_t> os(in[0].shape().begin(), in[0].shape().end());
                      os.push_back(c);
                      std::vector<double> out(size_t(in[0].numel() * c), 0.0);
                      for (size_t i = 0; i < iv.size(); ++i) out[i * size_t(c) + size_t(iv[i])] = 1;
                      return Tensors{tensor_of(out, Shape(os), DType::Int64)};
                    }};
    };
    return std::vector<Sample>{sample("[2,3] classes 5", positions({2, 3}, 5, g), 5),
                               sample("inferred classes", positions({4}, 4, g), -1),
                               sample("stepped", stepped({3}, DType::Int64, g, 0, 3), 4),
                               sample("empty", positions({0}, 3, g), 3)};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("index >= num_classes", "one_hot", [] { one_hot(full({1}, 3, DType::Int64), 3); }),
        throws_<IndexError>("negative index", "one_hot", [] { one_hot(full({1}, -1, DType::Int64), 3); }),
        throws_<TypeError>("float indices", "one_hot", [] { one_hot(zeros({1}), 3); })};
  };
  return s;
}
SKIFF_OP_SPEC(one_hot_spec());

// ---- sort / topk ----------------------------------------------------------------------------

// Sorted values and positions of every line along dim, by std::stable_sort (NaN last
// ascending, first descending: it counts as the largest value).
Tensors ref_sort(const Tensor& x, int64_t dim, bool descending, int64_t k, DType t) {
  const Shape& s = x.shape();
  int64_t d = wrap_dim(dim, x.dim()), n = x.dim() ? s[size_t(d)] : 1;
  if (k < 0) k = n;
  Shape os = s;
  if (x.dim()) os[size_t(d)] = k;
  std::vector<double> xv = values(x), vals(size_t(os.numel())), idx(size_t(os.numel()));
  auto less = [](double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); };
  for (int64_t i = 0; i < os.numel(); ++i) {
    V o = unravel(i, os);
    if (x.dim() && o[size_t(d)] != 0) continue;
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto at = [&](int64_t j) {
      V p = o;
      if (x.dim()) p[size_t(d)] = j;
      return xv[size_t(ravel(p, s))];
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return descending ? less(at(b), at(a)) : less(at(a), at(b));
    });
    for (int64_t j = 0; j < k; ++j) {
      V p = o;
      if (x.dim()) p[size_t(d)] = j;
      vals[size_t(ravel(p, os))] = at(order[size_t(j)]);
      idx[size_t(ravel(p, os))] = double(order[size_t(j)]);
    }
  }
  return {tensor_of(vals, os, t), tensor_of(idx, os, DType::Int64)};
}

const std::vector<DType> kSortable = kFloats + kInts + std::vector<DType>{DType::Bool};

OpSpec sort_spec() {
  OpSpec s{.op = "sort", .dtypes = kSortable, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensor x, int64_t dim, bool desc) {
      return Sample{.note = std::move(note), .inputs = {x},
                    .run = [dim, desc](const Tensors& in) {
                      ValuesIndices r = sort(in[0], dim, desc);
                      return Tensors{r.values, r.indices};
                    },
                    .ref = [dim, desc, t](const Tensors& in) { return ref_sort(in[0], dim, desc, -1, t); }};
    };
    std::vector<Sample> v{sample("[3,7] ascending (integers tie: stability)", make({3, 7}, t, g), -1, false),
                          sample("[4,5] dim 0 descending", make({4, 5}, t, g), 0, true),
                          sample("transposed [5,6]", transposed({5, 6}, t, g), 1, false),
                          sample("permuted [3,4,5] dim 1", permuted({3, 4, 5}, t, g), 1, false),
                          sample("[2,40] (long lines)", make({2, 40}, t, g), 1, true),
                          sample("empty [0,3]", make({0, 3}, t, g), 1, false)};
    if (is_floating(t)) {
      Tensor x = make({2, 4}, t, g);
      x = where(gt(x, 1.0), full({}, NAN, t), x);  // NaN sorts as the largest value
      v.push_back(sample("NaN entries", x, 1, false));
      v.back().gradcheck = false;
    }
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<IndexError>("dim out of range", "sort", [] { sort(zeros({3}), 1); })};
  };
  return s;
}
SKIFF_OP_SPEC(sort_spec());

OpSpec topk_spec() {
  OpSpec s{.op = "topk", .dtypes = kSortable, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensor x, int64_t k, int64_t dim, bool largest) {
      return Sample{.note = std::move(note), .inputs = {x},
                    .run = [k, dim, largest](const Tensors& in) {
                      ValuesIndices r = topk(in[0], k, dim, largest);
                      return Tensors{r.values, r.indices};
                    },
                    .ref = [k, dim, largest, t](const Tensors& in) { return ref_sort(in[0], dim, largest, k, t); }};
    };
    return std::vector<Sample>{sample("[3,7] k 3 largest", make({3, 7}, t, g), 3, -1, true),
                               sample("[5,4] k 2 smallest dim 0", make({5, 4}, t, g), 2, 0, false),
                               sample("stepped [2,9] k 9", stepped({2, 9}, t, g), 9, 1, true),
                               sample("k 0", make({2, 3}, t, g), 0, 1, true),
                               sample("empty [0,4] k 2", make({0, 4}, t, g), 2, 1, true)};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("k > size", "topk", [] { topk(zeros({3}), 4); }),
        throws_<IndexError>("dim out of range", "topk", [] { topk(zeros({3}), 1, 1); })};
  };
  return s;
}
SKIFF_OP_SPEC(topk_spec());

}  // namespace
}  // namespace skiff::spec
