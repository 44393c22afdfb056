#include "framework/nn/norm.h"

#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"
#include "framework/ops/nn/norm.h"
#include "framework/ops/op.h"

namespace skiff::nn {

BatchNormBase::BatchNormBase(int64_t c, double eps, double momentum, bool affine, bool track)
    : c_(c), eps_(eps), momentum_(momentum) {
  SKIFF_CHECK(c > 0, "BatchNorm: expected num_features > 0, got {}", c);
  SKIFF_CHECK(eps >= 0 && momentum >= 0 && momentum <= 1,
              "BatchNorm: expected eps >= 0 and momentum in [0, 1], got eps={} momentum={}", eps, momentum);
  if (affine) {
    weight = register_parameter("weight", ones({c}));
    bias = register_parameter("bias", zeros({c}));
  }
  if (track) {
    running_mean = register_buffer("running_mean", zeros({c}));
    running_var = register_buffer("running_var", ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, DType::Int64));
  }
}

Tensor BatchNormBase::forward(const Tensor& x) {
  check_input(x);
  bool use_batch_stats = is_training() || !running_mean.defined();
  if (is_training() && num_batches_tracked.defined()) {
    // The op updates running_mean/var in place; the counter is ours to keep.
    num_batches_tracked.data<int64_t>()[0] += 1;
    num_batches_tracked.storage()->bump_version();
  }
  return batch_norm(x, running_mean, running_var, weight, bias, use_batch_stats, momentum_, eps_);
}

std::string BatchNormBase::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", c_, eps_, momentum_,
                     weight.defined(), running_mean.defined());
}

void BatchNorm1d::check_input(const Tensor& x) const {
  SKIFF_CHECK_SHAPE((x.dim() == 2 || x.dim() == 3) && x.size(1) == num_features(),
                    "BatchNorm1d: expected input [N, {0}] or [N, {0}, L], got {1}", num_features(), x.shape());
}

void BatchNorm2d::check_input(const Tensor& x) const {
  SKIFF_CHECK_SHAPE(x.dim() == 4 && x.size(1) == num_features(), "BatchNorm2d: expected input [N, {}, H, W], got {}",
                    num_features(), x.shape());
}

LayerNorm::LayerNorm(std::vector<int64_t> normalized_shape, double eps, bool affine)
    : shape_(std::move(normalized_shape)), eps_(eps) {
  SKIFF_CHECK(!shape_.empty(), "LayerNorm: normalized_shape must not be empty");
  for (int64_t d : shape_) SKIFF_CHECK(d > 0, "LayerNorm: normalized_shape {} has a non-positive size", shape_);
  if (affine) {
    weight = register_parameter("weight", ones(Shape(shape_)));
    bias = register_parameter("bias", zeros(Shape(shape_)));
  }
}

Tensor LayerNorm::forward(const Tensor& x) { return layer_norm(x, shape_, weight, bias, eps_); }

std::string LayerNorm::extra_repr() const {
  return fmt::format("{}, eps={}, elementwise_affine={}", shape_, eps_, weight.defined());
}

GroupNorm::GroupNorm(int64_t groups, int64_t c, double eps, bool affine) : groups_(groups), c_(c), eps_(eps) {
  SKIFF_CHECK(groups > 0 && c > 0 && c % groups == 0,
              "GroupNorm: num_groups={} must be positive and divide num_channels={}", groups, c);
  if (affine) {
    weight = register_parameter("weight", ones({c}));
    bias = register_parameter("bias", zeros({c}));
  }
}

Tensor GroupNorm::forward(const Tensor& x) {
  SKIFF_CHECK_SHAPE(x.dim() >= 2 && x.size(1) == c_, "GroupNorm: expected input [N, {}, *], got {}", c_, x.shape());
  return group_norm(x, groups_, weight, bias, eps_);
}

std::string GroupNorm::extra_repr() const {
  return fmt::format("{}, {}, eps={}, affine={}", groups_, c_, eps_, weight.defined());
}

RMSNorm::RMSNorm(int64_t dim, double eps) : dim_(dim), eps_(eps) {
  SKIFF_CHECK(dim > 0, "RMSNorm: dim must be positive, got {}", dim);
  SKIFF_CHECK(eps >= 0, "RMSNorm: eps must be >= 0, got {}", eps);
  weight = register_parameter("weight", ones({dim}));
}

Tensor RMSNorm::forward(const Tensor& x) {
  SKIFF_CHECK_SHAPE(x.dim() >= 1 && x.size(-1) == dim_, "RMSNorm: expected input [*, {}], got {}", dim_, x.shape());
  bool half = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  Tensor xf = half ? skiff::to(x, DType::Float32) : x;
  Tensor y = xf * rsqrt(mean(square(xf), {-1}, true) + eps_);
  if (half) y = skiff::to(y, x.dtype());
  return y * weight;
}

std::string RMSNorm::extra_repr() const { return fmt::format("{}, eps={}", dim_, eps_); }

}  // namespace skiff::nn
