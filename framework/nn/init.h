#pragma once
/// \file init.h
/// Parameter initializers (torch.nn.init). Each fills a floating tensor in place,
/// without recording autograd, from a skiff Generator (the default generator when
/// `gen` is null). Values are drawn on the calling thread in row-major order, so
/// the same seed always gives the same tensor.
///
/// Fans. For a weight [out, in, k...] (Linear [out, in], Conv [O, C/groups, kh, kw])
/// fan_in = in * prod(k) and fan_out = out * prod(k); a 1-D tensor has
/// fan_in = fan_out = its size.
///
/// Every function throws TypeError for a non-floating tensor and ValueError for an
/// undefined tensor or a bad argument (std < 0, a > b, ...).

#include <cstdint>
#include <string>
#include <utility>

#include "framework/core/rng.h"
#include "framework/tensor/tensor.h"

namespace skiff::nn::init {

/// Which fan kaiming_* preserves the variance of: FanIn (forward pass) or FanOut (backward pass).
enum class FanMode { FanIn, FanOut };

/// Activation following the initialized layer, for calculate_gain.
enum class Nonlinearity { Linear, Conv, Sigmoid, Tanh, ReLU, LeakyReLU, SELU };

/// Recommended gain (torch.nn.init.calculate_gain): 1 for Linear/Conv/Sigmoid,
/// 5/3 for Tanh, sqrt(2) for ReLU, sqrt(2 / (1 + slope^2)) for LeakyReLU
/// (`param` = negative slope, default 0.01), 3/4 for SELU.
double calculate_gain(Nonlinearity nl, double param = 0.01);

/// (fan_in, fan_out) of a weight tensor (see the file comment).
/// \throws ValueError for a 0-dimensional tensor.
std::pair<int64_t, int64_t> fan_in_and_fan_out(const Tensor& t);

/// While one lives on this thread, the random initializers below (uniform_, normal_,
/// trunc_normal_, xavier_*, kaiming_*) leave their tensor as it is. For building a model
/// whose every parameter a loader overwrites next: drawing 80M values only to discard
/// them took 2 s of a 2.6 s load. Constant initializers (zeros_, ones_, constant_) still run.
class SkipRandomInitGuard {
 public:
  SkipRandomInitGuard();
  ~SkipRandomInitGuard();
  SkipRandomInitGuard(const SkipRandomInitGuard&) = delete;
  SkipRandomInitGuard& operator=(const SkipRandomInitGuard&) = delete;
  /// True while a guard lives on this thread.
  static bool active();

 private:
  bool previous_;
};

/// U(a, b). \throws ValueError if a > b.
void uniform_(const Tensor& t, double a = 0.0, double b = 1.0, Generator* gen = nullptr);
/// N(mean, std^2). \throws ValueError if std < 0.
void normal_(const Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
/// N(mean, std^2) conditioned on [a, b] (absolute bounds, like PyTorch), by
/// rejection. \throws ValueError if a >= b, std <= 0, or [a, b] holds less than
/// 1e-4 of the probability mass (rejection would take too long).
void trunc_normal_(const Tensor& t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0,
                   Generator* gen = nullptr);
void constant_(const Tensor& t, double value);
void zeros_(const Tensor& t);
void ones_(const Tensor& t);

/// Glorot uniform: U(-r, r), r = gain * sqrt(6 / (fan_in + fan_out)).
void xavier_uniform_(const Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// Glorot normal: N(0, s^2), s = gain * sqrt(2 / (fan_in + fan_out)).
void xavier_normal_(const Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// He uniform: U(-r, r), r = sqrt(3) * gain(nl, a) / sqrt(fan), fan chosen by mode.
/// `a` is the LeakyReLU negative slope (ignored for other nonlinearities).
/// Linear/Conv layers default to a = sqrt(5) (PyTorch's reset_parameters).
void kaiming_uniform_(const Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                      Nonlinearity nl = Nonlinearity::LeakyReLU, Generator* gen = nullptr);
/// He normal: N(0, s^2), s = gain(nl, a) / sqrt(fan).
void kaiming_normal_(const Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                     Nonlinearity nl = Nonlinearity::LeakyReLU, Generator* gen = nullptr);

}  // namespace skiff::nn::init
