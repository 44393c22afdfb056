#pragma once
/// \file norm.h
/// Normalization layers: BatchNorm1d/2d, LayerNorm, GroupNorm (formulas in
/// framework/ops/nn/norm.h) and RMSNorm (composite, written with elementwise ops).

#include <string>
#include <vector>

#include "framework/nn/module.h"

namespace skiff::nn {

/// Batch normalization shared by BatchNorm1d and BatchNorm2d.
///
/// Parameters weight [C] (ones) and bias [C] (zeros) when affine. Buffers
/// running_mean [C] (zeros), running_var [C] (ones) and num_batches_tracked
/// (int64 scalar) when track_running_stats. In training mode the batch
/// statistics normalize x and update the running ones:
/// running = (1 - momentum) * running + momentum * batch (unbiased variance).
/// In eval mode the running statistics are used; without tracked statistics the
/// batch statistics are used in both modes.
/// \throws ValueError for num_features <= 0, eps < 0 or momentum outside [0, 1].
class BatchNormBase : public Module {
 public:
  BatchNormBase(int64_t num_features, double eps, double momentum, bool affine, bool track_running_stats);
  Tensor forward(const Tensor& x) override;
  int64_t num_features() const { return c_; }

  Tensor weight, bias;                                   ///< [C]; undefined without affine
  Tensor running_mean, running_var, num_batches_tracked; ///< undefined without tracking

 protected:
  /// Throws ShapeError unless x has an accepted rank and C channels in dim 1.
  virtual void check_input(const Tensor& x) const = 0;
  std::string extra_repr() const override;

 private:
  int64_t c_;
  double eps_, momentum_;
};

/// Accepts x [N, C] or [N, C, L].
class BatchNorm1d : public BatchNormBase {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNormBase(num_features, eps, momentum, affine, track_running_stats) {}
  std::string type_name() const override { return "BatchNorm1d"; }

 protected:
  void check_input(const Tensor& x) const override;
};

/// Accepts x [N, C, H, W].
class BatchNorm2d : public BatchNormBase {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNormBase(num_features, eps, momentum, affine, track_running_stats) {}
  std::string type_name() const override { return "BatchNorm2d"; }

 protected:
  void check_input(const Tensor& x) const override;
};

/// Normalizes over the trailing dims given by normalized_shape; weight (ones) and
/// bias (zeros) have that shape when elementwise_affine.
/// x [*, normalized_shape...] -> same shape. \throws ShapeError from forward when the
/// trailing dims differ.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  std::string type_name() const override { return "LayerNorm"; }
  Tensor forward(const Tensor& x) override;

  Tensor weight, bias;

 protected:
  std::string extra_repr() const override;

 private:
  std::vector<int64_t> shape_;
  double eps_;
};

/// Group normalization: x [N, C, *] in `num_groups` groups of channels; per
/// channel affine weight [C] (ones) and bias [C] (zeros).
/// \throws ValueError if num_groups does not divide num_channels.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  std::string type_name() const override { return "GroupNorm"; }
  Tensor forward(const Tensor& x) override;

  Tensor weight, bias;

 protected:
  std::string extra_repr() const override;

 private:
  int64_t groups_, c_;
  double eps_;
};

/// Root-mean-square normalization (Zhang & Sennrich 2019), as LLaMA uses it:
///   y = weight * x / sqrt(mean(x^2 over the last dim) + eps)
/// x [*, D] -> [*, D]; weight [D] (ones), no bias, no mean subtraction. Half-precision
/// inputs are normalized in float32 and cast back before the weight multiplies, as
/// Hugging Face's LlamaRMSNorm does. Composite: differentiable to any order.
/// \throws ValueError for dim <= 0 or eps < 0; forward throws ShapeError when the last
/// dim of x is not D.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  std::string type_name() const override { return "RMSNorm"; }
  Tensor forward(const Tensor& x) override;
  double eps() const { return eps_; }

  Tensor weight;  ///< [D]

 protected:
  std::string extra_repr() const override;

 private:
  int64_t dim_;
  double eps_;
};

}  // namespace skiff::nn
