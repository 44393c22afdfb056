#pragma once
/// \file linear.h
/// Linear, Identity, Flatten and Dropout.

#include <string>

#include "framework/core/rng.h"
#include "framework/nn/module.h"

namespace skiff::nn {

/// y = x W^T + b.
///   x: [*, in_features] -> [*, out_features]; weight [out, in]; bias [out].
/// Initialization (PyTorch's): weight kaiming_uniform(a = sqrt(5)), i.e.
/// U(-1/sqrt(in), 1/sqrt(in)); bias U(-1/sqrt(in), 1/sqrt(in)). Drawn from `gen`
/// (default generator when null). Parameters are float32; use to() for others.
/// \throws ValueError for non-positive sizes; forward throws ShapeError when the
/// last dim of x is not in_features.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr);
  std::string type_name() const override { return "Linear"; }
  Tensor forward(const Tensor& x) override;
  /// Re-draws weight and bias with the default initialization.
  void reset_parameters(Generator* gen = nullptr);
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

  Tensor weight;  ///< [out, in]
  Tensor bias;    ///< [out], undefined when built without bias

  // ---- low-rank adaptation (LoRA, Hu et al. 2021); nn/lora.h applies it to a model ----

  /// Adds a low-rank update: forward becomes x W^T + b + (alpha / rank) (x A^T) B^T with
  /// children lora_A [rank, in] (Linear's default init, as PEFT) and lora_B [out, rank]
  /// (zeros, so the output is unchanged until B trains). State names follow PEFT:
  /// "<layer>.lora_A.weight", "<layer>.lora_B.weight".
  /// \throws ValueError for rank <= 0, alpha <= 0, or a layer that already has an adapter.
  void add_lora(int64_t rank, double alpha, Generator* gen = nullptr);
  bool has_lora() const { return lora_A != nullptr; }
  /// alpha / rank (0 without an adapter).
  double lora_scale() const { return lora_scale_; }
  /// Folds the update into weight (W += scale B A) so forward is one matmul again, and
  /// takes it out (W -= scale B A). Merged, forward skips the adapter and its gradients
  /// stop: merge for inference and export, not while training the adapter.
  /// \throws ValueError without an adapter, or when already merged / not merged.
  void merge_lora();
  void unmerge_lora();
  bool lora_merged() const { return lora_merged_; }
  std::shared_ptr<Linear> lora_A, lora_B;  ///< null without an adapter

 protected:
  std::string extra_repr() const override;

 private:
  Tensor lora_delta() const;  // scale * B A, [out, in] (callers hold a NoGradGuard)
  int64_t in_, out_;
  double lora_scale_ = 0;
  bool lora_merged_ = false;
};

/// Returns its input unchanged (a placeholder in configurable models).
class Identity : public Module {
 public:
  std::string type_name() const override { return "Identity"; }
  Tensor forward(const Tensor& x) override { return x; }
};

/// Flattens dims start_dim..end_dim into one (default: all but the batch dim).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_(start_dim), end_(end_dim) {}
  std::string type_name() const override { return "Flatten"; }
  Tensor forward(const Tensor& x) override;

 private:
  int64_t start_, end_;
};

/// In training mode zeroes each element with probability p and scales the rest
/// by 1 / (1 - p); in eval mode returns x. Draws come from `gen` (default
/// generator when null), which must outlive the module.
/// \throws ValueError unless 0 <= p <= 1.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  std::string type_name() const override { return "Dropout"; }
  Tensor forward(const Tensor& x) override;
  double p() const { return p_; }

 protected:
  std::string extra_repr() const override;

 private:
  double p_;
  Generator* gen_;
};

}  // namespace skiff::nn
