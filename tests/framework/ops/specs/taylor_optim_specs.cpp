// Specs of activation_jet (Taylor-mode derivatives through tanh / sin), its fused
// backward, and the fused Adam/AdamW update. References: Faa di Bruno's formula to
// fourth order with the activations' derivatives written out, and the Adam update of
// torch.optim written as a scalar loop.
#include <algorithm>
#include <array>
#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/ops/ops.h"
#include "framework/ops/optim/optim_ops.h"
#include "framework/ops/taylor/taylor.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

// f, f', f'', f''', f'''' of the activation at x.
std::array<double, 5> derivatives(const std::string& act, double x) {
  if (act == "sin") return {std::sin(x), std::cos(x), -std::sin(x), -std::cos(x), std::sin(x)};
  double t = std::tanh(x), d = 1 - t * t;
  return {t, d, -2 * t * d, (6 * t * t - 2) * d, (16 * t - 24 * t * t * t) * d};
}

// y_k = d^k/ds^k act(z(s)) at 0 with z(s) = z0 + sum_k z_k s^k / k! (Faa di Bruno).
Tensors ref_jet(const Tensors& in, int order, const std::string& act, DType t) {
  const Shape& s0 = in[0].shape();
  const int64_t n = s0[0], h = s0[1], m = in[1].shape()[0];
  std::vector<double> z0 = values(in[0]);
  std::vector<std::vector<double>> zk;  // z1..z4 expanded to [M, N, H], zero past G
  for (int k = 1; k <= 4; ++k) {
    std::vector<double> v(size_t(m * n * h), 0.0);
    if (k < int(in.size())) {
      const Tensor& z = in[size_t(k)];
      std::vector<double> zv = values(z);
      for (int64_t i = 0; i < m * n * h; ++i) {
        int64_t a = i / (n * h), b = (i / h) % n, c = i % h;
        v[size_t(i)] = zv[size_t(ravel({a, z.shape()[1] == 1 ? 0 : b, c}, z.shape()))];
      }
    }
    zk.push_back(v);
  }
  std::vector<double> y0;
  for (double x : z0) y0.push_back(derivatives(act, x)[0]);
  Tensors out{tensor_of(y0, s0, t)};
  for (int k = 1; k <= order; ++k) {
    std::vector<double> y(size_t(m * n * h));
    for (int64_t i = 0; i < m * n * h; ++i) {
      auto f = derivatives(act, z0[size_t(i % (n * h))]);
      double a = zk[0][size_t(i)], b = zk[1][size_t(i)], c = zk[2][size_t(i)], d = zk[3][size_t(i)];
      double v = k == 1   ? f[1] * a
                 : k == 2 ? f[2] * a * a + f[1] * b
                 : k == 3 ? f[3] * a * a * a + 3 * f[2] * a * b + f[1] * c
                          : f[4] * a * a * a * a + 6 * f[3] * a * a * b + f[2] * (3 * b * b + 4 * a * c) + f[1] * d;
      y[size_t(i)] = v;
    }
    out.push_back(tensor_of(y, {m, n, h}, t));
  }
  return out;
}

Tensors jet_run(const Tensors& in, int order, const std::string& act) {
  return activation_jet(in[0], Tensors(in.begin() + 1, in.end()), order, act);
}

Sample jet_sample(std::string note, Tensors in, int order, std::string act, DType t) {
  return {.note = std::move(note), .inputs = in,
          .run = [order, act](const Tensors& x) { return jet_run(x, order, act); },
          .ref = [order, act, t](const Tensors& x) { return ref_jet(x, order, act, t); },
          .tol_scale = 4};
}

std::vector<Sample> jet_samples(DType t, Generator& g) {
  return {jet_sample("tanh order 1, broadcast z1 [2,1,3]", {make({4, 3}, t, g), make({2, 1, 3}, t, g)}, 1, "tanh", t),
          jet_sample("tanh order 2", {make({2, 3}, t, g), make({1, 2, 3}, t, g), make({1, 2, 3}, t, g)}, 2, "tanh", t),
          jet_sample("sin order 4, G 2", {make({3, 2}, t, g), make({2, 1, 2}, t, g), make({2, 3, 2}, t, g)}, 4, "sin", t),
          jet_sample("tanh order 4, G 4, transposed z0",
                     {transposed({5, 3}, t, g), make({1, 5, 3}, t, g), make({1, 5, 3}, t, g), make({1, 5, 3}, t, g),
                      make({1, 5, 3}, t, g)},
                     4, "tanh", t),
          jet_sample("sin order 3 empty N", {make({0, 3}, t, g), make({2, 1, 3}, t, g), make({2, 0, 3}, t, g)}, 3, "sin", t)};
}

OpSpec activation_jet_spec() {
  OpSpec s{.op = "activation_jet", .dtypes = kF32F64, .samples = jet_samples, .grad = true, .gradgrad = true};
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("unknown activation", "activation_jet",
                            [] { activation_jet(zeros({2, 3}), {zeros({1, 1, 3})}, 1, "relu"); }),
        throws_<ValueError>("order 5", "activation_jet", [] { activation_jet(zeros({2, 3}), {zeros({1, 1, 3})}, 5, "tanh"); }),
        throws_<ShapeError>("z1 of the wrong width", "activation_jet",
                            [] { activation_jet(zeros({2, 3}), {zeros({1, 1, 4})}, 1, "tanh"); })};
  };
  return s;
}
SKIFF_OP_SPEC(activation_jet_spec());

// The fused first-order backward (no create_graph), against finite differences of
// every output dotted with its upstream gradient.
OpSpec activation_jet_backward_spec() {
  OpSpec s{.op = "activation_jet_backward", .dtypes = kF32F64, .backward_of = "activation_jet"};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (Sample& f : jet_samples(t, g)) {
      if (f.inputs[0].numel() == 0) continue;
      Tensors outs = f.run(f.inputs);
      Tensors in = f.inputs, grads;
      for (auto& o : outs) grads.push_back(make(o.shape(), t, g));
      const size_t k = in.size();
      in.insert(in.end(), grads.begin(), grads.end());
      RunFn fwd = f.run;
      v.push_back({.note = f.note, .inputs = in,
                   .run = [fwd, k](const Tensors& x) {
                     Tensors leaves;
                     for (size_t i = 0; i < k; ++i) leaves.push_back(detail::contiguous_copy(x[i]).set_requires_grad());
                     return autograd::grad(fwd(leaves), leaves, Tensors(x.begin() + long(k), x.end()));
                   },
                   .ref = [fwd, k, t](const Tensors& x) {
                     // One output: every jet output flattened and concatenated, against the
                     // upstream gradients flattened the same way.
                     auto flat = [fwd, k](const Tensors& a) {
                       Tensors parts;
                       for (auto& o : fwd(Tensors(a.begin(), a.begin() + long(k)))) parts.push_back(reshape(o, {-1}));
                       return Tensors{concat(parts)};
                     };
                     Tensors gs;
                     for (size_t i = k; i < x.size(); ++i) gs.push_back(reshape(detail::contiguous_copy(x[i]), {-1}));
                     Tensor gcat = concat(gs);
                     Tensors r;
                     for (size_t i = 0; i < k; ++i) r.push_back(detail::cast(numeric_vjp(flat, x, int(i), gcat), t));
                     return r;
                   },
                   .tol_scale = t == DType::Float64 ? numeric_tol_scale(t) : 20.0});
    }
    return v;
  };
  s.no_empty = "activation_jet's empty sample covers the op; its gradient is empty too";
  return s;
}
SKIFF_OP_SPEC(activation_jet_backward_spec());

// ---- adam_step -----------------------------------------------------------------------------

struct AdamCase {
  std::string note;
  AdamStep s;
  Shape shape;
};

// Returns param, exp_avg, exp_avg_sq, max_exp_avg_sq after one step (on copies).
Tensors run_adam(const Tensors& in, const AdamStep& s) {
  Tensors c = contiguous_copies(in);
  adam_step_(c[0], c[1], c[2], c[3], c[4], s);
  return {c[0], c[2], c[3], c[4]};
}

Tensors ref_adam(const Tensors& in, const AdamStep& s, DType t) {
  std::vector<double> p = values(in[0]), gr = values(in[1]), m = values(in[2]), v = values(in[3]), vmax = values(in[4]);
  const double step_size = s.lr / (1 - std::pow(s.beta1, double(s.step)));
  const double bc2 = std::sqrt(1 - std::pow(s.beta2, double(s.step)));
  for (size_t i = 0; i < p.size(); ++i) {
    double g = s.maximize ? -gr[i] : gr[i];
    if (s.decoupled) p[i] *= 1 - s.lr * s.weight_decay;
    else g += s.weight_decay * p[i];
    m[i] += (g - m[i]) * (1 - s.beta1);
    v[i] = s.beta2 * v[i] + (1 - s.beta2) * g * g;
    double vv = v[i];
    if (s.amsgrad) vv = vmax[i] = std::max(vmax[i], v[i]);
    p[i] -= step_size * m[i] / (std::sqrt(vv) / bc2 + s.eps);
  }
  const Shape& sh = in[0].shape();
  return {tensor_of(p, sh, t), tensor_of(m, sh, t), tensor_of(v, sh, t), tensor_of(vmax, sh, t)};
}

OpSpec adam_step_spec() {
  OpSpec s{.op = "adam_step", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    std::vector<AdamCase> cases{
        {"adam step 1", {.lr = 0.1}, {5, 13}},
        {"amsgrad step 3, weight decay", {.lr = 0.01, .weight_decay = 0.1, .step = 3, .amsgrad = true}, {7}},
        {"adamw maximize step 2", {.lr = 0.05, .weight_decay = 0.2, .step = 2, .decoupled = true, .maximize = true}, {2, 3}},
        {"empty", {}, {0}}};
    std::vector<Sample> v;
    for (auto& c : cases) {
      AdamStep st = c.s;
      v.push_back({.note = c.note,
                   .inputs = {make(c.shape, t, g), make(c.shape, t, g), make(c.shape, t, g, -0.1, 0.1),
                              make(c.shape, t, g, 0, 0.01), make(c.shape, t, g, 0, 0.02)},
                   .run = [st](const Tensors& in) { return run_adam(in, st); },
                   .ref = [st, t](const Tensors& in) { return ref_adam(in, st, t); },
                   .tol_scale = 4});
    }
    return v;
  };
  s.errors = [] {
    auto z = [](Shape sh, DType t = DType::Float32) { return zeros(sh, t); };
    return std::vector<ErrorCase>{
        throws_<ShapeError>("grad shape", "adam_step", [z] { adam_step_(z({3}), z({4}), z({3}), z({3}), Tensor(), {}); }),
        throws_<TypeError>("mixed dtypes", "adam_step",
                           [z] { adam_step_(z({3}), z({3}, DType::Float64), z({3}), z({3}), Tensor(), {}); }),
        throws_<TypeError>("float16 parameter", "adam_step", [z] {
          adam_step_(z({3}, DType::Float16), z({3}, DType::Float16), z({3}, DType::Float16), z({3}, DType::Float16),
                     Tensor(), {});
        }),
        throws_<ValueError>("strided parameter", "contiguous",
                            [z] { adam_step_(slice(z({6}), 0, 0, 6, 2), z({3}), z({3}), z({3}), Tensor(), {}); })};
  };
  s.no_strided = "the update is in place on contiguous tensors; a strided one is an error (see errors)";
  return s;
}
SKIFF_OP_SPEC(adam_step_spec());


// ---- sgd_step, rmsprop_step, adagrad_step ---------------------------------------------------
// Each sample's inputs are the parameter, its gradient and the state tensors the step reads
// (all present; the step picks the ones its settings use); the outputs are those tensors after
// one step, on copies. The references are torch.optim's formulas in float64.

template <typename Step, typename Run, typename Ref>
OpSpec optimizer_step_spec(const char* op, std::vector<std::pair<std::string, Step>> cases, Run run, Ref ref,
                           std::vector<std::pair<double, double>> state_ranges) {
  OpSpec s{.op = op, .dtypes = kF32F64};
  s.samples = [cases, run, ref, state_ranges](DType t, Generator& g) {
    std::vector<Sample> v;
    for (const Shape& shape : {Shape{5, 13}, Shape{0}}) {
      for (const auto& [note, st] : cases) {
        Tensors in{make(shape, t, g), make(shape, t, g)};
        for (auto [lo, hi] : state_ranges) in.push_back(make(shape, t, g, lo, hi));
        v.push_back({.note = note + (shape.numel() == 0 ? " (empty)" : ""),
                     .inputs = in,
                     .run = [run, st = st](const Tensors& x) { return run(contiguous_copies(x), st); },
                     .ref = [ref, st = st, t](const Tensors& x) { return ref(x, st, t); },
                     .gradcheck = false,
                     .tol_scale = 4});
      }
    }
    return v;
  };
  s.no_strided = "the update is in place on contiguous tensors; a strided one is an error (see errors)";
  return s;
}

Tensors as_tensors(const std::vector<std::vector<double>>& vs, const Shape& shape, DType t) {
  Tensors out;
  for (const auto& v : vs) out.push_back(tensor_of(v, shape, t));
  return out;
}

OpSpec sgd_step_spec() {
  std::vector<std::pair<std::string, SgdStep>> cases{
      {"plain", {.lr = 0.1}},
      {"momentum, first step", {.lr = 0.1, .momentum = 0.9, .first = true}},
      {"momentum, dampening, weight decay", {.lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01}},
      {"nesterov, maximize", {.lr = 0.05, .momentum = 0.8, .nesterov = true, .maximize = true}}};
  auto run = [](Tensors c, const SgdStep& st) {
    sgd_step_(c[0], c[1], c[2], st);
    return Tensors{c[0], c[2]};
  };
  auto ref = [](const Tensors& in, const SgdStep& st, DType t) {
    std::vector<double> p = values(in[0]), gr = values(in[1]), b = values(in[2]);
    for (size_t i = 0; i < p.size(); ++i) {
      double d = (st.maximize ? -gr[i] : gr[i]) + st.weight_decay * p[i];
      if (st.momentum != 0) {
        b[i] = st.first ? d : st.momentum * b[i] + (1 - st.dampening) * d;
        d = st.nesterov ? d + st.momentum * b[i] : b[i];
      }
      p[i] -= st.lr * d;
    }
    return as_tensors({p, b}, in[0].shape(), t);
  };
  OpSpec s = optimizer_step_spec("sgd_step", cases, run, ref, {{-0.1, 0.1}});
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("momentum buffer shape", "sgd_step: momentum_buffer has shape [4]",
                            [] { sgd_step_(zeros({3}), zeros({3}), zeros({4}), {.momentum = 0.9}); }),
        throws_<TypeError>("float16 parameter", "sgd_step", [] {
          sgd_step_(zeros({3}, DType::Float16), zeros({3}, DType::Float16), Tensor(), {});
        }),
        throws_<ValueError>("strided parameter", "contiguous",
                            [] { sgd_step_(slice(zeros({6}), 0, 0, 6, 2), zeros({3}), Tensor(), {}); })};
  };
  return s;
}
SKIFF_OP_SPEC(sgd_step_spec());

OpSpec rmsprop_step_spec() {
  std::vector<std::pair<std::string, RmspropStep>> cases{
      {"plain", {.lr = 0.01}},
      {"centered, weight decay", {.lr = 0.01, .weight_decay = 0.1, .centered = true}},
      {"momentum, maximize", {.lr = 0.01, .alpha = 0.9, .momentum = 0.5, .maximize = true}},
      {"centered with momentum", {.lr = 0.02, .momentum = 0.3, .centered = true}}};
  auto run = [](Tensors c, const RmspropStep& st) {
    rmsprop_step_(c[0], c[1], c[2], c[3], c[4], st);
    return Tensors{c[0], c[2], c[3], c[4]};
  };
  auto ref = [](const Tensors& in, const RmspropStep& st, DType t) {
    std::vector<double> p = values(in[0]), gr = values(in[1]), v = values(in[2]), ga = values(in[3]), b = values(in[4]);
    for (size_t i = 0; i < p.size(); ++i) {
      const double g = (st.maximize ? -gr[i] : gr[i]) + st.weight_decay * p[i];
      v[i] = st.alpha * v[i] + (1 - st.alpha) * g * g;
      double avg;
      if (st.centered) {
        ga[i] += (g - ga[i]) * (1 - st.alpha);
        avg = std::sqrt(v[i] - ga[i] * ga[i]) + st.eps;
      } else {
        avg = std::sqrt(v[i]) + st.eps;
      }
      if (st.momentum > 0) {
        b[i] = st.momentum * b[i] + g / avg;
        p[i] -= st.lr * b[i];
      } else {
        p[i] -= st.lr * g / avg;
      }
    }
    return as_tensors({p, v, ga, b}, in[0].shape(), t);
  };
  // square_avg above grad_avg^2, so the centered root is real.
  OpSpec s = optimizer_step_spec("rmsprop_step", cases, run, ref, {{1, 2}, {-0.5, 0.5}, {-0.1, 0.1}});
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("square_avg shape", "rmsprop_step: square_avg has shape [2]",
                            [] { rmsprop_step_(zeros({3}), zeros({3}), zeros({2}), Tensor(), Tensor(), {}); }),
        throws_<TypeError>("mixed dtypes", "rmsprop_step", [] {
          rmsprop_step_(zeros({3}), zeros({3}), zeros({3}, DType::Float64), Tensor(), Tensor(), {});
        })};
  };
  return s;
}
SKIFF_OP_SPEC(rmsprop_step_spec());

OpSpec adagrad_step_spec() {
  std::vector<std::pair<std::string, AdagradStep>> cases{{"plain", {.lr = 0.1}},
                                                         {"weight decay, maximize", {.lr = 0.05, .weight_decay = 0.1, .maximize = true}}};
  auto run = [](Tensors c, const AdagradStep& st) {
    adagrad_step_(c[0], c[1], c[2], st);
    return Tensors{c[0], c[2]};
  };
  auto ref = [](const Tensors& in, const AdagradStep& st, DType t) {
    std::vector<double> p = values(in[0]), gr = values(in[1]), sum = values(in[2]);
    for (size_t i = 0; i < p.size(); ++i) {
      const double g = (st.maximize ? -gr[i] : gr[i]) + st.weight_decay * p[i];
      sum[i] += g * g;
      p[i] -= st.lr * g / (std::sqrt(sum[i]) + st.eps);
    }
    return as_tensors({p, sum}, in[0].shape(), t);
  };
  OpSpec s = optimizer_step_spec("adagrad_step", cases, run, ref, {{0, 1}});
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("sum shape", "adagrad_step: sum has shape [4]",
                            [] { adagrad_step_(zeros({3}), zeros({3}), zeros({4}), {}); }),
        throws_<TypeError>("int parameter", "adagrad_step", [] {
          adagrad_step_(zeros({3}, DType::Int32), zeros({3}, DType::Int32), zeros({3}, DType::Int32), {});
        })};
  };
  return s;
}
SKIFF_OP_SPEC(adagrad_step_spec());

}  // namespace
}  // namespace skiff::spec
