#pragma once
/// \file network.h
/// The fully connected network of a PINN and its Taylor-mode derivatives.
///
/// PinnNet maps points of a box to outputs: the input is first scaled to
/// [-1, 1]^d (from the box it is built for, kept as buffers so a saved model
/// carries it), then Linear layers with a smooth activation between them.
///
/// jet() propagates truncated Taylor series through the network: for each
/// direction v it returns d^k/ds^k u(x + s v) at s = 0, k = 1..order, for all
/// points at once. That is forward-mode higher-order differentiation: Linear
/// layers map the coefficients linearly, activations go through the fused
/// activation_jet op (Faa di Bruno, framework/ops/taylor), and the whole is
/// differentiable, so the loss built from it is trained with one ordinary
/// backward pass. Compared with nesting reverse mode four times for a
/// biharmonic, the graph is ~25 ops instead of thousands and its cost grows
/// linearly with the order.
#include <memory>
#include <string>
#include <vector>

#include "framework/nn/linear.h"
#include "framework/nn/module.h"

namespace skiff::science {

enum class Activation { Tanh, Sin };
/// "tanh" or "sin". \throws ValueError naming the accepted values.
Activation parse_activation(const std::string& name);
std::string activation_name(Activation a);

struct NetConfig {
  int64_t inputs = 2;
  int64_t outputs = 1;
  std::vector<int64_t> hidden{50, 50, 50, 50};
  Activation activation = Activation::Tanh;
  DType dtype = DType::Float32;
  uint64_t seed = 0;
  /// Box the inputs live in; mapped to [-1, 1] before the first layer.
  std::vector<double> lo, hi;
};

/// Directional derivatives of the outputs: d[k - 1] is [M, N, outputs], the
/// k-th derivative along direction m at point n.
struct Jet {
  Tensor value;           ///< [N, outputs]
  std::vector<Tensor> d;  ///< order entries
};

class PinnNet : public nn::Module {
 public:
  /// Xavier-normal weights and zero biases drawn from a generator seeded with cfg.seed.
  /// \throws ValueError for empty sizes or a box that does not match `inputs`.
  explicit PinnNet(const NetConfig& cfg);
  std::string type_name() const override { return "PinnNet"; }
  /// x [N, inputs] (the model's dtype) -> [N, outputs].
  Tensor forward(const Tensor& x) override;
  /// Taylor coefficients along `directions` [M, inputs] up to `order` (1..4).
  /// \throws ValueError for another order, ShapeError for mismatched inputs.
  Jet jet(const Tensor& x, const Tensor& directions, int order);
  const NetConfig& config() const { return cfg_; }

 private:
  NetConfig cfg_;
  std::vector<std::shared_ptr<nn::Linear>> layers_;
  Tensor in_shift_, in_scale_;  // x_in = (x - shift) * scale
};

}  // namespace skiff::science
