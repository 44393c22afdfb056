#pragma once
/// \file fno.h
/// The Fourier Neural Operator of Li et al. (2020) for functions on a periodic
/// 1-D grid: it learns a map between functions (here the Burgers initial
/// condition u0 -> the solution u(., T)) from sampled pairs.
///
///   a(x), x  --lift-->  width channels  --L Fourier layers-->  --project-->  u(x)
///   Fourier layer:  v <- gelu( F^-1[ R_k . F[v]_k ]  +  W v )
///
/// F is the real FFT along the grid (framework rfft/irfft), R_k are learned
/// complex [width x width] matrices for the lowest `modes` frequencies (higher
/// ones are dropped), W is a pointwise linear map. Because the weights live in
/// frequency space, a trained model runs on any grid with at least 2 * modes
/// points (zero-shot super-resolution). Channels are kept last ([B, N, C]) so
/// the pointwise maps are plain Linear layers.
#include <memory>
#include <vector>

#include "framework/core/rng.h"
#include "framework/nn/linear.h"
#include "framework/nn/module.h"

namespace skiff::science {

struct FnoConfig {
  int64_t modes = 16;
  int64_t width = 64;
  int64_t layers = 4;
  int64_t projection = 128;  ///< hidden width of the output projection
  uint64_t seed = 0;
};

/// x [B, N, in] -> [B, N, out]: the lowest `modes` frequencies along N mixed
/// by complex weights [modes, in, out] (stored as real and imaginary parts).
class SpectralConv1d : public nn::Module {
 public:
  /// Weights uniform in [0, 1 / (in * out)) for both parts, as in the FNO paper.
  SpectralConv1d(int64_t in, int64_t out, int64_t modes, Generator& gen);
  std::string type_name() const override { return "SpectralConv1d"; }
  /// \throws ShapeError for a wrong channel count or a grid with fewer than
  /// 2 * (modes - 1) points.
  Tensor forward(const Tensor& x) override;

  Tensor weight_real, weight_imag;

 private:
  int64_t in_, modes_;
};

class Fno1d : public nn::Module {
 public:
  /// \throws ValueError for non-positive sizes.
  explicit Fno1d(const FnoConfig& cfg);
  std::string type_name() const override { return "Fno1d"; }
  /// a [B, N] (float32, samples at x_j = j / N) -> u [B, N].
  Tensor forward(const Tensor& a) override;
  const FnoConfig& config() const { return cfg_; }

 private:
  FnoConfig cfg_;
  std::shared_ptr<nn::Linear> lift_, project_hidden_, project_out_;
  std::vector<std::shared_ptr<SpectralConv1d>> spectral_;
  std::vector<std::shared_ptr<nn::Linear>> pointwise_;
};

}  // namespace skiff::science
