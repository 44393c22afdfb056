// Specs of softmax / log_softmax, the normalization layers and dropout. The
// references normalise each group of values in float64 with the textbook formulas.
#include <algorithm>
#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

// Applies f to each line of x along dim (a vector of values in order), in place.
Tensor per_line(const Tensor& x, int64_t dim, const std::function<void(std::vector<double>&)>& f, DType out) {
  const Shape& s = x.shape();
  std::vector<double> v = values(x);
  if (x.dim() == 0) {
    f(v);
    return tensor_of(v, s, out);
  }
  int64_t d = wrap_dim(dim, x.dim()), n = s[size_t(d)];
  for (int64_t i = 0; i < s.numel(); ++i) {
    auto idx = unravel(i, s);
    if (idx[size_t(d)] != 0) continue;
    std::vector<double> line;
    for (int64_t k = 0; k < n; ++k) {
      idx[size_t(d)] = k;
      line.push_back(v[size_t(ravel(idx, s))]);
    }
    f(line);
    for (int64_t k = 0; k < n; ++k) {
      idx[size_t(d)] = k;
      v[size_t(ravel(idx, s))] = line[size_t(k)];
    }
  }
  return tensor_of(v, s, out);
}

void softmax_line(std::vector<double>& v, bool log_space) {
  double m = -INFINITY, z = 0;
  for (double e : v) m = std::max(m, e);
  for (double e : v) z += std::exp(e - m);
  for (double& e : v) e = log_space ? e - m - std::log(z) : std::exp(e - m) / z;
}

OpSpec softmax_spec(std::string op, bool log_space) {
  OpSpec s{.op = op, .dtypes = kFloats, .grad = true, .gradgrad = true};
  s.samples = [log_space](DType t, Generator& g) {
    auto sample = [t, log_space](std::string note, Tensor x, int64_t dim) {
      return Sample{.note = std::move(note), .inputs = {x},
                    .run = [dim, log_space](const Tensors& in) {
                      return Tensors{log_space ? log_softmax(in[0], dim) : softmax(in[0], dim)};
                    },
                    .ref = [dim, t, log_space](const Tensors& in) {
                      return Tensors{per_line(in[0], dim, [log_space](auto& v) { softmax_line(v, log_space); }, t)};
                    }};
    };
    return std::vector<Sample>{sample("[3,4] dim 1", make({3, 4}, t, g, -3, 3), 1),
                               sample("[2,3,4] dim 0", make({2, 3, 4}, t, g, -3, 3), 0),
                               sample("[4,70] dim -1 (blocked path)", make({4, 70}, t, g, -3, 3), -1),
                               sample("transposed [5,6] dim 0", transposed({5, 6}, t, g, -3, 3), 0),
                               sample("permuted [2,3,4] dim 1", permuted({2, 3, 4}, t, g, -3, 3), 1),
                               sample("large logits", make({2, 5}, t, g, 500, 1000), 1),
                               sample("0-d", make({}, t, g), 0),
                               sample("empty [0,3] dim 1", make({0, 3}, t, g), 1)};
  };
  s.errors = [op, log_space] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("dim out of range", "dim",
                            [log_space] { log_space ? log_softmax(zeros({2, 3}), 2) : softmax(zeros({2, 3}), 2); }),
        throws_<TypeError>("integer input", op,
                           [log_space] { log_space ? log_softmax(arange(4), 0) : softmax(arange(4), 0); })};
  };
  return s;
}
SKIFF_OP_SPEC(softmax_spec("softmax", false));
SKIFF_OP_SPEC(softmax_spec("log_softmax", true));

// Normalises each contiguous block of m values (biased variance).
std::vector<double> normalize_blocks(std::vector<double> v, int64_t m, double eps) {
  for (size_t b = 0; b + size_t(m) <= v.size() && m > 0; b += size_t(m)) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < m; ++i) mean += v[b + size_t(i)];
    mean /= double(m);
    for (int64_t i = 0; i < m; ++i) var += (v[b + size_t(i)] - mean) * (v[b + size_t(i)] - mean);
    var /= double(m);
    for (int64_t i = 0; i < m; ++i) v[b + size_t(i)] = (v[b + size_t(i)] - mean) / std::sqrt(var + eps);
  }
  return v;
}

OpSpec layer_norm_spec() {
  OpSpec s{.op = "layer_norm", .dtypes = kFloats, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensors in, std::vector<int64_t> ns) {
      return Sample{.note = std::move(note), .inputs = in,
                    .run = [ns](const Tensors& x) {
                      return Tensors{layer_norm(x[0], ns, x.size() > 1 ? x[1] : Tensor(), x.size() > 2 ? x[2] : Tensor())};
                    },
                    .ref = [ns, t](const Tensors& x) {
                      int64_t m = 1;
                      for (int64_t d : ns) m *= d;
                      std::vector<double> y = normalize_blocks(values(x[0]), m, 1e-5);
                      if (x.size() > 1) {
                        std::vector<double> w = values(x[1]), b = values(x[2]);
                        for (size_t i = 0; i < y.size(); ++i) y[i] = y[i] * w[i % size_t(m)] + b[i % size_t(m)];
                      }
                      return Tensors{tensor_of(y, x[0].shape(), t)};
                    }};
    };
    return std::vector<Sample>{
        sample("[3,4] over [4], affine", {make({3, 4}, t, g), make({4}, t, g), make({4}, t, g)}, {4}),
        sample("[2,3,4] over [3,4]", {make({2, 3, 4}, t, g)}, {3, 4}),
        sample("[4,70] affine", {make({4, 70}, t, g), make({70}, t, g), make({70}, t, g)}, {70}),
        sample("transposed [5,6], stepped weight", {transposed({5, 6}, t, g), stepped({6}, t, g), make({6}, t, g)}, {6}),
        sample("empty [0,4]", {make({0, 4}, t, g)}, {4})};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("trailing dims differ", "layer_norm", [] { layer_norm(zeros({2, 3}), {4}); }),
        throws_<ValueError>("empty normalized_shape", "layer_norm", [] { layer_norm(zeros({2, 3}), {}); }),
        throws_<ShapeError>("weight shape", "weight", [] { layer_norm(zeros({2, 3}), {3}, zeros({2})); }),
        throws_<TypeError>("integer input", "layer_norm", [] { layer_norm(zeros({2, 3}, DType::Int32), {3}); })};
  };
  return s;
}
SKIFF_OP_SPEC(layer_norm_spec());

// batch_norm over [N, C, *]: the per-channel values, gathered into contiguous blocks.
std::vector<double> channel_major(const Tensor& x) {
  return values(detail::contiguous_copy(transpose(x, 0, 1)));
}
Tensor from_channel_major(const std::vector<double>& v, const Shape& xs, DType t) {
  Shape ts = xs;
  std::swap(ts[0], ts[1]);
  return detail::contiguous_copy(transpose(tensor_of(v, ts, t), 0, 1));
}

OpSpec batch_norm_spec() {
  OpSpec s{.op = "batch_norm", .dtypes = kFloats, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    // Training: normalised with batch statistics; the running statistics (copies, so
    // the sample's inputs stay as they were) come back as outputs 1 and 2.
    auto train = [t](std::string note, Tensors in) {
      return Sample{.note = std::move(note), .inputs = in,
                    .run = [](const Tensors& x) {
                      Tensor rm = detail::contiguous_copy(x[3]), rv = detail::contiguous_copy(x[4]);
                      return Tensors{batch_norm(x[0], rm, rv, x[1], x[2], true, 0.1), rm, rv};
                    },
                    .ref = [t](const Tensors& x) {
                      const Shape& xs = x[0].shape();
                      int64_t c = xs[1], m = xs.numel() / std::max<int64_t>(c, 1);
                      std::vector<double> cm = channel_major(x[0]), w = values(x[1]), b = values(x[2]);
                      std::vector<double> rm = values(x[3]), rv = values(x[4]);
                      for (int64_t k = 0; k < c; ++k) {
                        double mean = 0, var = 0;
                        for (int64_t i = 0; i < m; ++i) mean += cm[size_t(k * m + i)];
                        mean /= double(m);
                        for (int64_t i = 0; i < m; ++i) var += std::pow(cm[size_t(k * m + i)] - mean, 2);
                        rm[size_t(k)] = 0.9 * rm[size_t(k)] + 0.1 * mean;
                        rv[size_t(k)] = 0.9 * rv[size_t(k)] + 0.1 * var / double(m - 1);
                        var /= double(m);
                        for (int64_t i = 0; i < m; ++i) {
                          double& e = cm[size_t(k * m + i)];
                          e = (e - mean) / std::sqrt(var + 1e-5) * w[size_t(k)] + b[size_t(k)];
                        }
                      }
                      return Tensors{from_channel_major(cm, xs, t), tensor_of(rm, {c}, t), tensor_of(rv, {c}, t)};
                    },
                    .tol_scale = 2};
    };
    auto eval = [t](std::string note, Tensors in) {
      return Sample{.note = std::move(note), .inputs = in,
                    .run = [](const Tensors& x) { return Tensors{batch_norm(x[0], x[3], x[4], x[1], x[2], false)}; },
                    .ref = [t](const Tensors& x) {
                      const Shape& xs = x[0].shape();
                      int64_t c = xs[1], m = xs.numel() / std::max<int64_t>(c, 1);
                      std::vector<double> cm = channel_major(x[0]), w = values(x[1]), b = values(x[2]);
                      std::vector<double> rm = values(x[3]), rv = values(x[4]);
                      for (int64_t k = 0; k < c; ++k)
                        for (int64_t i = 0; i < m; ++i) {
                          double& e = cm[size_t(k * m + i)];
                          e = (e - rm[size_t(k)]) / std::sqrt(rv[size_t(k)] + 1e-5) * w[size_t(k)] + b[size_t(k)];
                        }
                      return Tensors{from_channel_major(cm, xs, t)};
                    },
                    .gradcheck = false};
    };
    auto params = [&g, t](int64_t c) {
      return Tensors{make({c}, t, g), make({c}, t, g), make({c}, t, g, -0.5, 0.5), make({c}, t, g, 0.5, 2)};
    };
    auto with = [](Tensor x, Tensors p) {
      p.insert(p.begin(), x);
      return p;
    };
    return std::vector<Sample>{
        train("train [4,3]", with(make({4, 3}, t, g), params(3))),
        train("train [2,3,2,3]", with(make({2, 3, 2, 3}, t, g), params(3))),
        train("train transposed [3,2,4,5]", with(transposed({3, 2, 4, 5}, t, g), params(2))),
        eval("eval [2,3,4]", with(make({2, 3, 4}, t, g), params(3))),
        eval("eval empty batch", with(make({0, 3, 2}, t, g), params(3)))};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("1-D input", "batch_norm", [] { batch_norm(zeros({3}), Tensor(), Tensor()); }),
        throws_<ValueError>("one value per channel in training", "batch_norm",
                            [] { batch_norm(zeros({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true); }),
        throws_<ValueError>("only one running statistic", "batch_norm", [] { batch_norm(zeros({2, 3}), zeros({3}), Tensor()); })};
  };
  return s;
}
SKIFF_OP_SPEC(batch_norm_spec());

// batch_norm_backward: the fused first-order gradient of training-mode batch_norm
// (x, weight, bias), against finite differences of the forward.
OpSpec batch_norm_backward_spec() {
  OpSpec s{.op = "batch_norm_backward", .dtypes = kFloats, .backward_of = "batch_norm"};
  s.samples = [](DType t, Generator& g) {
    auto fwd = [](const Tensors& x) { return Tensors{batch_norm(x[0], Tensor(), Tensor(), x[1], x[2], true)}; };
    auto sample = [&](std::string note, Tensor x, int64_t c) {
      return Sample{.note = std::move(note), .inputs = {x, make({c}, t, g), make({c}, t, g), make(x.shape(), t, g)},
                    .run = [](const Tensors& in) {
                      Tensors leaves;
                      for (int i = 0; i < 3; ++i) leaves.push_back(detail::contiguous_copy(in[size_t(i)]).set_requires_grad());
                      Tensor y = batch_norm(leaves[0], Tensor(), Tensor(), leaves[1], leaves[2], true);
                      return autograd::grad({y}, leaves, {in[3]});
                    },
                    .ref = [fwd, t](const Tensors& in) {
                      Tensors p{in[0], in[1], in[2]}, out;
                      for (int i = 0; i < 3; ++i) out.push_back(detail::cast(numeric_vjp(fwd, p, i, in[3]), t));
                      return out;
                    },
                    .tol_scale = t == DType::Float64 ? numeric_tol_scale(t) : 10.0};
    };
    return std::vector<Sample>{sample("[4,3]", make({4, 3}, t, g), 3),
                               sample("transposed [3,2,2,3]", transposed({3, 2, 2, 3}, t, g), 2)};
  };
  s.no_empty = "training needs more than one value per channel (ValueError, see batch_norm's errors)";
  return s;
}
SKIFF_OP_SPEC(batch_norm_backward_spec());

// dropout: each output is 0 or x / (1 - p), the kept fraction is near 1 - p, the
// same seed gives the same mask; eval mode and p = 0 return x, p = 1 zeros.
OpSpec dropout_spec() {
  OpSpec s{.op = "dropout", .dtypes = kFloats, .grad = false,
           .no_grad = "random: the mask changes with every call, so finite differences do not apply; "
                      "tests/framework/ops/nn covers its gradient with a fixed seed"};
  s.samples = [](DType t, Generator& g) {
    auto run = [](double p, bool train) {
      return [p, train](const Tensors& in) {
        Generator gen(42);
        return Tensors{dropout(in[0], p, train, &gen)};
      };
    };
    auto check = [t](double p) {
      return [t, p](const Tensors& in, const Tensors& out) -> std::string {
        std::vector<double> x = values(in[0]), y = values(out[0]);
        auto [atol, rtol] = tolerance(t);
        int64_t kept = 0;
        for (size_t i = 0; i < x.size(); ++i) {
          double want = x[i] / (1 - p);
          bool zero = y[i] == 0, scaled = std::abs(y[i] - want) <= atol + rtol * std::abs(want);
          if (!zero && !scaled) return "element " + std::to_string(i) + " is neither 0 nor x / (1 - p)";
          kept += !zero;
        }
        double frac = x.empty() ? 1 - p : double(kept) / double(x.size());
        if (std::abs(frac - (1 - p)) > 0.1) return "kept fraction " + std::to_string(frac);
        return "";
      };
    };
    auto same = [t](const Tensors& in) { return Tensors{map1(in[0], [](double x) { return x; }, t)}; };
    return std::vector<Sample>{
        {.note = "p 0.3 [40,50]", .inputs = {make({40, 50}, t, g, 0.5, 2)}, .run = run(0.3, true), .check = check(0.3)},
        {.note = "p 0.5 transposed", .inputs = {transposed({30, 40}, t, g, 0.5, 2)}, .run = run(0.5, true),
         .check = check(0.5)},
        {.note = "eval returns x", .inputs = {make({3, 4}, t, g)}, .run = run(0.5, false), .ref = same},
        {.note = "p 1 gives zeros", .inputs = {make({3, 4}, t, g)}, .run = run(1.0, true),
         .ref = [t](const Tensors& in) { return Tensors{map1(in[0], [](double) { return 0.0; }, t)}; }},
        {.note = "empty", .inputs = {make({0, 4}, t, g)}, .run = run(0.5, true), .ref = same}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("p > 1", "dropout", [] { dropout(zeros({3}), 1.5); }),
        throws_<TypeError>("integer input", "dropout", [] { dropout(zeros({3}, DType::Int32), 0.5); })};
  };
  return s;
}
SKIFF_OP_SPEC(dropout_spec());

}  // namespace
}  // namespace skiff::spec
