#include "suites/science/operator/fno.h"

#include "framework/core/error.h"
#include "framework/nn/init.h"
#include "framework/ops/ops.h"

namespace skiff::science {

SpectralConv1d::SpectralConv1d(int64_t in, int64_t out, int64_t modes, Generator& gen)
    : in_(in), modes_(modes) {
  SKIFF_CHECK(in > 0 && out > 0 && modes > 0, "SpectralConv1d: sizes must be positive (in {}, out {}, modes {})", in,
              out, modes);
  const double scale = 1.0 / double(in * out);
  weight_real = register_parameter("weight_real", zeros(Shape{modes, in, out}));
  weight_imag = register_parameter("weight_imag", zeros(Shape{modes, in, out}));
  nn::init::uniform_(weight_real, 0, scale, &gen);
  nn::init::uniform_(weight_imag, 0, scale, &gen);
}

Tensor SpectralConv1d::forward(const Tensor& x) {
  if (x.dim() != 3 || x.size(2) != in_)
    throw ShapeError(fmt::format("SpectralConv1d: expected [batch, grid, {}], got {}", in_, x.shape()));
  const int64_t n = x.size(1);
  if (n / 2 + 1 < modes_)
    throw ShapeError(fmt::format("SpectralConv1d: a grid of {} points has {} frequencies, fewer than the {} modes "
                                 "the layer was built with (use >= {} points)",
                                 n, n / 2 + 1, modes_, 2 * (modes_ - 1)));
  Tensor spectrum = narrow(rfft(x, std::nullopt, 1), 1, 0, modes_);        // [B, modes, in]
  Tensor mixed = matmul(permute(spectrum, {1, 0, 2}), complex(weight_real, weight_imag));  // [modes, B, out]
  return irfft(permute(mixed, {1, 0, 2}), n, 1);  // frequencies above `modes` are zero
}

Fno1d::Fno1d(const FnoConfig& cfg) : cfg_(cfg) {
  SKIFF_CHECK(cfg.modes > 0 && cfg.width > 0 && cfg.layers > 0 && cfg.projection > 0,
              "Fno1d: modes, width, layers and projection must be positive (got {}, {}, {}, {})", cfg.modes, cfg.width,
              cfg.layers, cfg.projection);
  Generator gen(cfg.seed);
  lift_ = register_module("lift", std::make_shared<nn::Linear>(2, cfg.width, true, &gen));
  for (int64_t l = 0; l < cfg.layers; ++l) {
    spectral_.push_back(register_module(fmt::format("spectral{}", l),
                                        std::make_shared<SpectralConv1d>(cfg.width, cfg.width, cfg.modes, gen)));
    pointwise_.push_back(
        register_module(fmt::format("pointwise{}", l), std::make_shared<nn::Linear>(cfg.width, cfg.width, true, &gen)));
  }
  project_hidden_ = register_module("project_hidden", std::make_shared<nn::Linear>(cfg.width, cfg.projection, true, &gen));
  project_out_ = register_module("project_out", std::make_shared<nn::Linear>(cfg.projection, 1, true, &gen));
}

Tensor Fno1d::forward(const Tensor& a) {
  if (a.dim() != 2) throw ShapeError(fmt::format("Fno1d: expected input samples [batch, grid], got {}", a.shape()));
  const int64_t batch = a.size(0), n = a.size(1);
  // The coordinate x_j = j / n as a second input channel.
  Tensor x = expand(reshape(arange(0.0, double(n), 1.0, a.dtype()) * (1.0 / double(n)), Shape{1, n, 1}),
                    Shape{batch, n, 1});
  Tensor h = (*lift_)(concat({unsqueeze(a, -1), x}, -1));
  for (size_t l = 0; l < spectral_.size(); ++l) {
    h = (*spectral_[l])(h) + (*pointwise_[l])(h);
    if (l + 1 < spectral_.size()) h = gelu(h);
  }
  return squeeze((*project_out_)(gelu((*project_hidden_)(h))), -1);
}

}  // namespace skiff::science
