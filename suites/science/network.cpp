#include "suites/science/network.h"

#include "framework/core/error.h"
#include "framework/nn/init.h"
#include "framework/ops/ops.h"

namespace skiff::science {

Activation parse_activation(const std::string& name) {
  if (name == "tanh") return Activation::Tanh;
  if (name == "sin") return Activation::Sin;
  throw ValueError(fmt::format("activation '{}' is not known; use 'tanh' or 'sin'", name));
}

std::string activation_name(Activation a) { return a == Activation::Tanh ? "tanh" : "sin"; }

PinnNet::PinnNet(const NetConfig& cfg) : cfg_(cfg) {
  SKIFF_CHECK(cfg.inputs >= 1 && cfg.outputs >= 1, "PinnNet: need at least one input and output");
  SKIFF_CHECK(int64_t(cfg.lo.size()) == cfg.inputs && int64_t(cfg.hi.size()) == cfg.inputs,
              "PinnNet: the input box has {} / {} bounds for {} inputs", cfg.lo.size(), cfg.hi.size(), cfg.inputs);
  Generator gen(cfg.seed);
  int64_t in = cfg.inputs;
  std::vector<int64_t> sizes = cfg.hidden;
  sizes.push_back(cfg.outputs);
  for (size_t i = 0; i < sizes.size(); ++i) {
    SKIFF_CHECK(sizes[i] >= 1, "PinnNet: layer {} has width {}", i, sizes[i]);
    auto l = register_module(std::to_string(i), std::make_shared<nn::Linear>(in, sizes[i], true, &gen));
    nn::init::xavier_normal_(l->weight, 1.0, &gen);
    nn::init::zeros_(l->bias);
    layers_.push_back(l);
    in = sizes[i];
  }
  std::vector<double> shift(cfg.inputs), scale(cfg.inputs);
  for (int64_t i = 0; i < cfg.inputs; ++i) {
    SKIFF_CHECK(cfg.hi[i] > cfg.lo[i], "PinnNet: input {} has an empty range [{}, {}]", i, cfg.lo[i], cfg.hi[i]);
    shift[i] = (cfg.lo[i] + cfg.hi[i]) / 2;
    scale[i] = 2 / (cfg.hi[i] - cfg.lo[i]);
  }
  in_shift_ = register_buffer("input_shift", from_vector(shift));
  in_scale_ = register_buffer("input_scale", from_vector(scale));
  to(cfg.dtype);
}

namespace {

Tensor activate(const Tensor& z, Activation a) { return a == Activation::Tanh ? tanh(z) : sin(z); }

// Sums of optional terms: an undefined tensor stands for zero, which is what
// most Taylor coefficients are right after the first (affine) layer.
Tensor plus(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a + b;
}
Tensor times(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return Tensor();
  return a * b;
}
Tensor times(const Tensor& a, double c) { return a.defined() ? a * c : Tensor(); }

// f^(k)(z) for k = 1..order from y = f(z): polynomials in tanh, a cycle for sin.
std::vector<Tensor> activation_derivatives(const Tensor& z, const Tensor& y, Activation a, int order) {
  std::vector<Tensor> f;
  if (a == Activation::Tanh) {
    Tensor t2 = y * y, f1 = 1.0 - t2;
    f.push_back(f1);
    if (order >= 2) f.push_back(-2.0 * y * f1);
    if (order >= 3) f.push_back(f1 * (6.0 * t2 - 2.0));
    if (order >= 4) f.push_back(f1 * y * (16.0 - 24.0 * t2));
  } else {
    Tensor c = cos(z);
    f.push_back(c);
    if (order >= 2) f.push_back(-y);
    if (order >= 3) f.push_back(-c);
    if (order >= 4) f.push_back(y);
  }
  return f;
}

// Taylor coefficients of f(z) from those of z (Faa di Bruno, orders 1..4).
std::vector<Tensor> compose(const std::vector<Tensor>& f, const std::vector<Tensor>& z) {
  const int order = int(z.size());
  const Tensor& z1 = z[0];
  std::vector<Tensor> y(order);
  Tensor z1sq = order >= 2 ? times(z1, z1) : Tensor();
  y[0] = times(f[0], z1);
  if (order >= 2) y[1] = plus(times(f[1], z1sq), times(f[0], z[1]));
  if (order >= 3)
    y[2] = plus(plus(times(f[2], times(z1sq, z1)), times(times(f[1], 3.0), times(z1, z[1]))), times(f[0], z[2]));
  if (order >= 4) {
    Tensor inner = plus(times(times(z[1], z[1]), 3.0), times(times(z1, z[2]), 4.0));
    y[3] = plus(plus(times(f[3], times(z1sq, z1sq)), times(times(f[2], 6.0), times(z1sq, z[1]))),
                plus(times(f[1], inner), times(f[0], z[3])));
  }
  return y;
}

}  // namespace

Tensor PinnNet::forward(const Tensor& x) {
  SKIFF_CHECK_SHAPE(x.dim() == 2 && x.size(1) == cfg_.inputs, "PinnNet: expected points [N, {}], got {}",
                    cfg_.inputs, x.shape());
  Tensor h = (x - in_shift_) * in_scale_;
  for (size_t i = 0; i < layers_.size(); ++i) {
    h = layers_[i]->forward(h);
    if (i + 1 < layers_.size()) h = activate(h, cfg_.activation);
  }
  return h;
}

Jet PinnNet::jet(const Tensor& x, const Tensor& directions, int order) {
  SKIFF_CHECK(order >= 1 && order <= 4, "PinnNet.jet: order must be 1..4, got {}", order);
  SKIFF_CHECK_SHAPE(x.dim() == 2 && x.size(1) == cfg_.inputs, "PinnNet.jet: expected points [N, {}], got {}",
                    cfg_.inputs, x.shape());
  SKIFF_CHECK_SHAPE(directions.dim() == 2 && directions.size(1) == cfg_.inputs,
                    "PinnNet.jet: expected directions [M, {}], got {}", cfg_.inputs, directions.shape());
  const int64_t m = directions.size(0), n = x.size(0);
  // First layer: affine, so the first coefficient is the same for every point
  // ([M, 1, H]) and all higher ones vanish.
  const auto& first = layers_[0];
  Tensor z0 = linear((x - in_shift_) * in_scale_, first->weight, first->bias);
  std::vector<Tensor> z(order);
  z[0] = unsqueeze(linear(skiff::to(directions, z0.dtype()) * in_scale_, first->weight), 1);
  for (size_t i = 1; i < layers_.size(); ++i) {
    Tensor y0 = activate(z0, cfg_.activation);
    std::vector<Tensor> y = compose(activation_derivatives(z0, y0, cfg_.activation, order), z);
    const auto& l = layers_[i];
    z0 = linear(y0, l->weight, l->bias);
    for (int k = 0; k < order; ++k)
      if (y[k].defined()) z[k] = linear(y[k], l->weight);
  }
  Jet out{z0, {}};
  for (int k = 0; k < order; ++k) {
    // A coefficient still undefined is identically zero (only for a network
    // with no hidden layer); materialize it so callers see full shapes.
    out.d.push_back(z[k].defined() ? expand(z[k], {m, n, cfg_.outputs})
                                   : zeros({m, n, cfg_.outputs}, z0.dtype()));
  }
  return out;
}

}  // namespace skiff::science
