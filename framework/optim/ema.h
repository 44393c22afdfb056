#pragma once
/// \file ema.h
/// Exponential moving average of weights (Polyak averaging), as used for evaluation
/// copies of models (timm ModelEma, TF ExponentialMovingAverage).
///
/// Each update does, for every floating tensor x with shadow s,
///   s = lerp(s, x, 1 - d)            (= d*s + (1-d)*x, PyTorch's lerp formula)
/// where d = decay, or with warm-up d = min(decay, (1 + n) / (10 + n)), n = number of
/// previous updates (so early averages are not dominated by the random init).
/// Non-floating tensors (counters such as BatchNorm's num_batches_tracked) are copied.
/// Shadows are contiguous CPU tensors in the compute dtype (float32 for fp16/bf16 tensors).

#include <map>
#include <string>
#include <vector>

#include "framework/optim/optimizer.h"

namespace skiff::nn {
class Module;
}

namespace skiff::optim {

class ExponentialMovingAverage {
 public:
  /// Tracks `tensors` (shadows start as copies). Names are "0", "1", ...
  /// \throws ValueError for decay outside [0, 1] or an undefined / non-CPU tensor.
  ExponentialMovingAverage(std::vector<Tensor> tensors, double decay, bool warmup = false);
  /// Tracks every parameter and buffer of `m` (its state_dict entries), keyed by dotted name.
  ExponentialMovingAverage(const nn::Module& m, double decay, bool warmup = false);

  /// Folds the current values into the shadows.
  void update();
  /// Decay the next update() will use.
  double current_decay() const;
  int64_t num_updates() const { return num_updates_; }
  double decay() const { return decay_; }

  /// Writes the averages into the tracked tensors (in place, converting dtype).
  void copy_to();
  /// Saves the tracked tensors' current values (for restore()). \throws ValueError if already stored.
  void store();
  /// Puts back the values saved by store(). \throws ValueError if nothing is stored.
  void restore();

  /// Averages by name (copies not needed: the map shares the shadow storage).
  std::map<std::string, Tensor> averaged() const;
  const std::vector<std::string>& names() const { return names_; }

  /// Tensors "shadow.<name>", scalars "num_updates", "decay", "warmup".
  OptimizerState state_dict() const;
  /// \throws ValueError for a missing shadow, ShapeError for a shape mismatch.
  void load_state_dict(const OptimizerState& sd);

 private:
  void init(double decay);
  std::vector<std::string> names_;
  std::vector<Tensor> tensors_, shadow_, backup_;
  double decay_;
  bool warmup_;
  bool stored_ = false;
  int64_t num_updates_ = 0;
};

/// RAII evaluation scope: store() + copy_to() on construction, restore() on destruction.
class EmaScope {
 public:
  explicit EmaScope(ExponentialMovingAverage& ema) : ema_(ema) {
    ema_.store();
    ema_.copy_to();
  }
  ~EmaScope() { ema_.restore(); }
  EmaScope(const EmaScope&) = delete;
  EmaScope& operator=(const EmaScope&) = delete;

 private:
  ExponentialMovingAverage& ema_;
};

}  // namespace skiff::optim
