#include "suites/science/network.h"

#include "framework/core/error.h"
#include "framework/nn/init.h"
#include "framework/ops/ops.h"
#include "framework/ops/taylor/taylor.h"

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
  std::vector<Tensor> z(1);
  z[0] = unsqueeze(linear(skiff::to(directions, z0.dtype()) * in_scale_, first->weight), 1);
  // Hidden layers: the activation's series in one fused op, then the next
  // Linear layer maps every coefficient linearly (no bias above order 0).
  const std::string act = activation_name(cfg_.activation);
  for (size_t i = 1; i < layers_.size(); ++i) {
    std::vector<Tensor> y = activation_jet(z0, z, order, act);
    const auto& l = layers_[i];
    z0 = linear(y[0], l->weight, l->bias);
    z.assign(order, Tensor());
    for (int k = 0; k < order; ++k) z[k] = linear(y[k + 1], l->weight);
  }
  Jet out{z0, {}};
  for (int k = 0; k < order; ++k) {
    // Without hidden layers only the first coefficient exists (the net is
    // affine); materialize the zeros so callers see full shapes.
    out.d.push_back(k < int(z.size()) ? expand(z[k], {m, n, cfg_.outputs}) : zeros({m, n, cfg_.outputs}, z0.dtype()));
  }
  return out;
}

}  // namespace skiff::science
