#include "framework/nn/linear.h"

#include <cmath>

#include "framework/nn/activation.h"
#include "framework/nn/init.h"
#include "framework/ops/linalg/linalg.h"
#include "framework/ops/nn/norm.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff::nn {

std::string LeakyReLU::extra_repr() const { return fmt::format("negative_slope={}", negative_slope_); }
std::string Softplus::extra_repr() const { return fmt::format("beta={}, threshold={}", beta_, threshold_); }

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias, Generator* gen)
    : in_(in_features), out_(out_features) {
  SKIFF_CHECK(in_features > 0 && out_features > 0, "Linear: expected positive sizes, got in={} out={}",
              in_features, out_features);
  weight = register_parameter("weight", empty({out_, in_}));
  if (with_bias) bias = register_parameter("bias", empty({out_}));
  reset_parameters(gen);
}

void Linear::reset_parameters(Generator* gen) {
  init::kaiming_uniform_(weight, std::sqrt(5.0), init::FanMode::FanIn, init::Nonlinearity::LeakyReLU, gen);
  if (bias.defined()) {
    double bound = 1.0 / std::sqrt(double(in_));
    init::uniform_(bias, -bound, bound, gen);
  }
}

Tensor Linear::forward(const Tensor& x) {
  SKIFF_CHECK_SHAPE(x.dim() >= 1 && x.size(-1) == in_, "Linear: expected input [*, {}], got {}", in_, x.shape());
  return linear(x, weight, bias);
}

std::string Linear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_, out_, bias.defined());
}

Tensor Flatten::forward(const Tensor& x) { return flatten(x, start_, end_); }

Dropout::Dropout(double p, Generator* gen) : p_(p), gen_(gen) {
  SKIFF_CHECK(p >= 0.0 && p <= 1.0, "Dropout: expected 0 <= p <= 1, got {}", p);
}

Tensor Dropout::forward(const Tensor& x) {
  if (!is_training() || p_ == 0.0) return x;
  return dropout(x, p_, true, gen_);
}

std::string Dropout::extra_repr() const { return fmt::format("p={}", p_); }

}  // namespace skiff::nn
