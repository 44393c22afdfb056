#include "framework/nn/linear.h"

#include <cmath>

#include "framework/nn/activation.h"
#include "framework/nn/init.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/linalg/linalg.h"
#include "framework/ops/op.h"
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
  Tensor y = linear(x, weight, bias);
  if (lora_A && !lora_merged_) y = add(y, mul((*lora_B)((*lora_A)(x)), lora_scale_));
  return y;
}

void Linear::add_lora(int64_t rank, double alpha, Generator* gen) {
  SKIFF_CHECK(rank > 0 && alpha > 0, "Linear.add_lora: expected rank > 0 and alpha > 0, got rank={} alpha={}", rank,
              alpha);
  SKIFF_CHECK(!lora_A, "Linear.add_lora: the layer already has an adapter");
  lora_A = register_module("lora_A", std::make_shared<Linear>(in_, rank, false, gen));
  lora_B = register_module("lora_B", std::make_shared<Linear>(rank, out_, false, gen));
  init::zeros_(lora_B->weight);
  lora_scale_ = alpha / double(rank);
}

Tensor Linear::lora_delta() const {
  return mul(matmul(lora_B->weight, lora_A->weight), lora_scale_);
}

void Linear::merge_lora() {
  SKIFF_CHECK(lora_A, "Linear.merge_lora: the layer has no adapter");
  SKIFF_CHECK(!lora_merged_, "Linear.merge_lora: the adapter is merged already");
  NoGradGuard no_grad;
  add_(weight, lora_delta());
  lora_merged_ = true;
}

void Linear::unmerge_lora() {
  SKIFF_CHECK(lora_A, "Linear.unmerge_lora: the layer has no adapter");
  SKIFF_CHECK(lora_merged_, "Linear.unmerge_lora: the adapter is not merged");
  NoGradGuard no_grad;
  sub_(weight, lora_delta());
  lora_merged_ = false;
}

std::string Linear::extra_repr() const {
  std::string s = fmt::format("in_features={}, out_features={}, bias={}", in_, out_, bias.defined());
  if (lora_A) s += fmt::format(", lora_rank={}, lora_scale={}{}", lora_A->out_features(), lora_scale_,
                               lora_merged_ ? ", merged" : "");
  return s;
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
