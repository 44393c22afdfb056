// Specs of the loss ops with kernels: nll_loss (behind nll_loss and cross_entropy)
// and ctc_loss, with their backward ops. nll's reference is the per-target pick and
// weighted mean; ctc's is the alpha recursion of Graves et al. (2006), written out
// in log space over float64. The backward ops are checked against finite differences.
#include <algorithm>
#include <cmath>
#include <limits>

#include "framework/autograd/engine.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using V = std::vector<int64_t>;

// nll_loss(log_probs [N, C, d...], target [N, d...]) with class weights and ignore_index.
Tensor ref_nll(const Tensor& x, const Tensor& target, const Tensor& weight, int64_t ignore, Reduction r, DType t) {
  const Shape& xs = x.shape();
  std::vector<double> xv = values(x), tv = values(target);
  std::vector<double> w = weight.defined() ? values(weight) : std::vector<double>(size_t(xs[1]), 1.0);
  std::vector<double> loss;
  double total = 0, wsum = 0;
  for (int64_t i = 0; i < target.numel(); ++i) {
    V p = unravel(i, target.shape());
    int64_t c = int64_t(tv[size_t(i)]);
    if (c == ignore) {
      loss.push_back(0);
      continue;
    }
    p.insert(p.begin() + 1, c);
    double l = -w[size_t(c)] * xv[size_t(ravel(p, xs))];
    loss.push_back(l);
    total += l;
    wsum += w[size_t(c)];
  }
  if (r == Reduction::None) return tensor_of(loss, target.shape(), t);
  return tensor_of(std::vector<double>{r == Reduction::Sum ? total : total / wsum}, {}, t);
}

Sample nll_sample(std::string note, Tensors in, int64_t ignore, Reduction r, DType t) {
  return {.note = std::move(note), .inputs = in,
          .run = [ignore, r](const Tensors& x) {
            return Tensors{nll_loss(x[0], x[1], x.size() > 2 ? x[2] : Tensor(), ignore, r)};
          },
          .ref = [ignore, r, t](const Tensors& x) {
            return Tensors{ref_nll(x[0], x[1], x.size() > 2 ? x[2] : Tensor(), ignore, r, t)};
          },
          .constant_inputs = {2}};  // class weights are never differentiated
}

Tensor classes(const Shape& s, int64_t c, Generator& g) { return randint(0, c, s, DType::Int64, &g); }

OpSpec nll_loss_spec() {
  OpSpec s{.op = "nll_loss", .dtypes = kFloats, .grad = true};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        nll_sample("[4,3] mean", {make({4, 3}, t, g, -3, 0), classes({4}, 3, g)}, -100, Reduction::Mean, t),
        nll_sample("[4,3] weighted sum", {make({4, 3}, t, g, -3, 0), classes({4}, 3, g), make({3}, t, g, 0.5, 2)}, -100,
                   Reduction::Sum, t),
        nll_sample("[2,3,2,2] none, ignore_index 2", {make({2, 3, 2, 2}, t, g, -3, 0), classes({2, 2, 2}, 3, g)}, 2,
                   Reduction::None, t),
        nll_sample("transposed [5,4] weighted mean, an ignored target", {transposed({5, 4}, t, g, -3, 0), classes({5}, 4, g),
                                                                          make({4}, t, g, 0.5, 2)},
                   3, Reduction::Mean, t),
        nll_sample("empty batch, none", {make({0, 3}, t, g), classes({0}, 3, g)}, -100, Reduction::None, t),
        // cross_entropy is log_softmax + nll_loss: its reference composes the two formulas.
        {.note = "cross_entropy [3,4]",
         .inputs = {make({3, 4}, t, g), classes({3}, 4, g)},
         .run = [](const Tensors& x) { return Tensors{cross_entropy(x[0], x[1])}; },
         .ref = [t](const Tensors& x) {
           std::vector<double> v = values(x[0]);
           for (size_t row = 0; row < 3; ++row) {
             double m = *std::max_element(v.begin() + long(row * 4), v.begin() + long(row * 4 + 4)), z = 0;
             for (size_t k = 0; k < 4; ++k) z += std::exp(v[row * 4 + k] - m);
             for (size_t k = 0; k < 4; ++k) v[row * 4 + k] -= m + std::log(z);
           }
           return Tensors{ref_nll(tensor_of(v, {3, 4}, DType::Float64), x[1], Tensor(), -100, Reduction::Mean, t)};
         },
         .tol_scale = 2}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<IndexError>("class out of range", "nll_loss", [] { nll_loss(zeros({2, 3}), full({2}, 3, DType::Int64)); }),
        throws_<ShapeError>("target shape", "nll_loss", [] { nll_loss(zeros({2, 3}), zeros({3}, DType::Int64)); }),
        throws_<TypeError>("float target", "nll_loss", [] { nll_loss(zeros({2, 3}), zeros({2})); })};
  };
  return s;
}
SKIFF_OP_SPEC(nll_loss_spec());

// The gradient of nll_loss w.r.t. log_probs (create_graph: differentiable in the
// upstream gradient, whose own backward is nll_loss).
OpSpec nll_loss_backward_spec() {
  OpSpec s{.op = "nll_loss_backward", .dtypes = kFloats, .grad = true, .backward_of = "nll_loss"};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensors in, int64_t ignore) {
      auto fwd = [ignore](const Tensors& x) {
        return Tensors{nll_loss(x[0], x[1], x[2], ignore, Reduction::None)};
      };
      return Sample{.note = std::move(note), .inputs = in,
                    .run = [ignore](const Tensors& x) {
                      Tensor lp = x[0].requires_grad() ? x[0] : detail::contiguous_copy(x[0]).set_requires_grad();
                      Tensor l = nll_loss(lp, x[1], x[2], ignore, Reduction::None);
                      return autograd::grad({l}, {lp}, {x[3]}, /*create_graph=*/true);
                    },
                    .ref = [fwd, t](const Tensors& x) {
                      return Tensors{detail::cast(numeric_vjp(fwd, {x[0], x[1], x[2]}, 0, x[3]), t)};
                    },
                    .constant_inputs = {2},  // class weights
                    .tol_scale = numeric_tol_scale(t)};
    };
    return std::vector<Sample>{
        sample("[4,3]", {make({4, 3}, t, g), classes({4}, 3, g), make({3}, t, g, 0.5, 2), make({4}, t, g)}, -100),
        sample("[2,3,2] ignore 1, transposed grad",
               {make({2, 3, 2}, t, g), classes({2, 2}, 3, g), make({3}, t, g, 0.5, 2), transposed({2, 2}, t, g)}, 1),
        sample("empty", {make({0, 3}, t, g), classes({0}, 3, g), make({3}, t, g), make({0}, t, g)}, -100)};
  };
  return s;
}
SKIFF_OP_SPEC(nll_loss_backward_spec());

// ---- ctc -----------------------------------------------------------------------------

double log_add(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

// -log p(target | inputs) for one sample: lp is [T][C], the extended label sequence
// interleaves blanks, alpha runs over the first `frames` frames.
double ctc_nll(const std::vector<std::vector<double>>& lp, const V& target, int64_t blank) {
  V ext{blank};
  for (int64_t c : target) ext.push_back(c), ext.push_back(blank);
  const size_t s = ext.size();
  std::vector<double> alpha(s, -INFINITY);
  if (lp.empty()) return target.empty() ? 0 : INFINITY;
  alpha[0] = lp[0][size_t(blank)];
  if (s > 1) alpha[1] = lp[0][size_t(ext[1])];
  for (size_t t = 1; t < lp.size(); ++t) {
    std::vector<double> next(s, -INFINITY);
    for (size_t k = 0; k < s; ++k) {
      double a = alpha[k];
      if (k >= 1) a = log_add(a, alpha[k - 1]);
      if (k >= 2 && ext[k] != blank && ext[k] != ext[k - 2]) a = log_add(a, alpha[k - 2]);
      next[k] = a + lp[t][size_t(ext[k])];
    }
    alpha = next;
  }
  double total = alpha[s - 1];
  if (s > 1) total = log_add(total, alpha[s - 2]);
  return -total;
}

// Inputs: log_probs [T, N, C], padded targets [N, S], input_lengths [N], target_lengths [N].
Tensor ref_ctc(const Tensors& in, Reduction r, bool zero_inf, DType t) {
  const Shape& xs = in[0].shape();
  std::vector<double> lp = values(in[0]), tg = values(in[1]), il = values(in[2]), tl = values(in[3]);
  const int64_t n = xs[1], c = xs[2], smax = in[1].dim() == 2 ? in[1].shape()[1] : 0;
  std::vector<double> loss;
  int64_t offset = 0;  // into concatenated 1-D targets
  for (int64_t b = 0; b < n; ++b) {
    std::vector<std::vector<double>> frames;
    for (int64_t f = 0; f < int64_t(il[size_t(b)]); ++f) {
      frames.emplace_back();
      for (int64_t k = 0; k < c; ++k) frames.back().push_back(lp[size_t((f * n + b) * c + k)]);
    }
    V target;
    for (int64_t j = 0; j < int64_t(tl[size_t(b)]); ++j)
      target.push_back(int64_t(tg[size_t(smax ? b * smax + j : offset + j)]));
    offset += int64_t(tl[size_t(b)]);
    double l = ctc_nll(frames, target, 0);
    if (zero_inf && std::isinf(l)) l = 0;
    loss.push_back(l);
  }
  if (r == Reduction::None) return tensor_of(loss, {n}, t);
  double total = 0;
  for (int64_t b = 0; b < n; ++b) total += r == Reduction::Sum ? loss[size_t(b)] : loss[size_t(b)] / std::max(tl[size_t(b)], 1.0);
  return tensor_of(std::vector<double>{r == Reduction::Sum ? total : total / double(n)}, {}, t);
}

// log_softmax over classes of random logits, as a CTC input would be.
Tensor log_probs(const Shape& s, DType t, Generator& g) { return log_softmax(make(s, t, g, -2, 2), -1); }

Sample ctc_sample(std::string note, Tensors in, Reduction r, bool zero_inf, DType t) {
  return {.note = std::move(note), .inputs = in,
          .run = [r, zero_inf](const Tensors& x) { return Tensors{ctc_loss(x[0], x[1], x[2], x[3], 0, r, zero_inf)}; },
          .ref = [r, zero_inf, t](const Tensors& x) { return Tensors{ref_ctc(x, r, zero_inf, t)}; },
          .tol_scale = 4};
}

Tensor ints(std::vector<int64_t> v, Shape s) { return from_vector<int64_t>(v, s); }

OpSpec ctc_loss_spec() {
  OpSpec s{.op = "ctc_loss", .dtypes = kF32F64, .grad = true};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        ctc_sample("T 6 N 2 C 4, none", {log_probs({6, 2, 4}, t, g), ints({1, 2, 2, 3, 1, 0}, {2, 3}), ints({6, 5}, {2}),
                                         ints({3, 2}, {2})},
                   Reduction::None, false, t),
        ctc_sample("repeated label, mean", {log_probs({5, 1, 3}, t, g), ints({1, 1}, {1, 2}), ints({5}, {1}), ints({2}, {1})},
                   Reduction::Mean, false, t),
        ctc_sample("concatenated targets, sum", {log_probs({4, 2, 3}, t, g), ints({1, 2, 2}, {3}), ints({4, 4}, {2}),
                                                 ints({2, 1}, {2})},
                   Reduction::Sum, false, t),
        ctc_sample("impossible target, zero_infinity", {log_probs({2, 1, 3}, t, g), ints({1, 1, 1}, {1, 3}), ints({2}, {1}),
                                                        ints({3}, {1})},
                   Reduction::None, true, t),
        ctc_sample("transposed log_probs", {transpose(log_probs({2, 5, 3}, t, g), 0, 1), ints({2, 1}, {2, 1}),
                                            ints({5, 4}, {2}), ints({1, 1}, {2})},
                   Reduction::Sum, false, t),
        ctc_sample("empty batch", {log_probs({3, 0, 3}, t, g), ints({}, {0, 2}), ints({}, {0}), ints({}, {0})},
                   Reduction::None, false, t)};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("target equal to blank", "blank",
                            [] { ctc_loss(zeros({3, 1, 3}), ints({0}, {1, 1}), ints({3}, {1}), ints({1}, {1})); }),
        throws_<IndexError>("input length > T", "ctc_loss",
                            [] { ctc_loss(zeros({3, 1, 3}), ints({1}, {1, 1}), ints({4}, {1}), ints({1}, {1})); }),
        throws_<ShapeError>("2-D log_probs", "ctc_loss",
                            [] { ctc_loss(zeros({3, 3}), ints({1}, {1, 1}), ints({3}, {1}), ints({1}, {1})); })};
  };
  return s;
}
SKIFF_OP_SPEC(ctc_loss_spec());

// ctc_loss_backward: the first-order gradient w.r.t. log_probs (not differentiable).
OpSpec ctc_loss_backward_spec() {
  OpSpec s{.op = "ctc_loss_backward", .dtypes = kF32F64, .backward_of = "ctc_loss"};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensors in, Reduction r) {
      auto fwd = [r](const Tensors& x) { return Tensors{ctc_loss(x[0], x[1], x[2], x[3], 0, r)}; };
      return Sample{.note = std::move(note), .inputs = in,
                    .run = [r](const Tensors& x) {
                      Tensor lp = detail::contiguous_copy(x[0]).set_requires_grad();
                      return autograd::grad({ctc_loss(lp, x[1], x[2], x[3], 0, r)}, {lp}, {x[4]});
                    },
                    .ref = [fwd, t](const Tensors& x) {
                      return Tensors{detail::cast(numeric_vjp(fwd, {x[0], x[1], x[2], x[3]}, 0, x[4]), t)};
                    },
                    .tol_scale = t == DType::Float64 ? numeric_tol_scale(t) : 10.0};
    };
    return std::vector<Sample>{
        sample("none", {log_probs({6, 2, 4}, t, g), ints({1, 2, 2, 3, 1, 0}, {2, 3}), ints({6, 5}, {2}), ints({3, 2}, {2}),
                        make({2}, t, g)},
               Reduction::None),
        sample("mean, transposed", {transpose(log_probs({2, 5, 3}, t, g), 0, 1), ints({2, 1}, {2, 1}), ints({5, 4}, {2}),
                                    ints({1, 1}, {2}), make({}, t, g)},
               Reduction::Mean)};
  };
  s.no_empty = "an empty batch has no gradient to compute; ctc_loss's empty sample covers the op";
  return s;
}
SKIFF_OP_SPEC(ctc_loss_backward_spec());

}  // namespace
}  // namespace skiff::spec
