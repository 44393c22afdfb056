#pragma once
/// \file trainer.h
/// The training loop every recipe runs: epochs of batches, evaluation every N
/// steps with the task's metric, best-model tracking, atomic checkpoints and
/// exact resume, gradient clipping, EMA, a per-step learning-rate schedule
/// (warm-up included), and the run's records.
///
/// A suite describes its work as a TrainTask (the model, the loss of a batch,
/// the evaluation); the Trainer owns nothing of it and knows no suite.
///
/// Output directory (TrainerOptions::output_dir):
///   train.log            every line printed, with a time stamp
///   metrics.jsonl        one JSON object per logged step and per evaluation
///   events.out.tfevents.* TensorBoard scalars (train/loss, train/lr, eval/<metric>)
///   checkpoints/         ckpt-<step>.safetensors, the last `keep_last` kept
///   best_model.safetensors  weights of the best evaluation (EMA weights with EMA)
///   latest_model.safetensors weights at the end of training
///   curves.png           loss and metric curves, written at the end
///
/// Exact resume: a checkpoint holds the model, optimizer and scheduler state,
/// the EMA shadows, the default generator and the data loader's position, so a
/// run resumed from step k takes the same steps k+1... as the uninterrupted run
/// (same thread count).
///
/// Ctrl-C: the first SIGINT finishes the current step, saves a checkpoint and
/// returns (FitResult::interrupted); a second one kills the process as usual.
///
/// Phases: a run may chain optimizers (TrainPhase), e.g. a physics-informed
/// network takes Adam steps and then L-BFGS steps, whose optimizer evaluates the
/// loss itself through a closure. Full-batch runs (no DataLoader) call
/// TrainTask::loss with an empty batch at every step.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/data/dataloader.h"
#include "framework/nn/module.h"
#include "framework/optim/lr_scheduler.h"
#include "framework/optim/optimizer.h"

namespace skiff::train {

/// What a recipe trains. The trainer calls model().train() before steps and
/// model().eval() before evaluate().
class TrainTask {
 public:
  virtual ~TrainTask() = default;
  virtual nn::Module& model() = 0;
  /// Forward pass and scalar loss of one training batch.
  virtual Tensor loss(const data::Example& batch) = 0;
  /// Metrics on the evaluation set (runs under no-grad).
  virtual std::map<std::string, double> evaluate() = 0;
};

/// One optimizer's share of a run, in order. A plain run has one phase.
struct TrainPhase {
  std::string name = "train";
  optim::Optimizer* optimizer = nullptr;
  /// Stepped once per step of this phase (may be null).
  optim::LRScheduler* scheduler = nullptr;
  /// Steps in this phase; 0 in the last phase: the rest of the run.
  int64_t steps = 0;
  /// The optimizer evaluates the loss itself (L-BFGS and its line search): each
  /// step is optimizer->step(closure), the closure recomputing loss and gradients.
  bool closure = false;
  /// Log / evaluate / checkpoint every N steps of this phase (0: TrainerOptions'
  /// log_every / eval_every / checkpoint_every).
  int64_t log_every = 0;
  int64_t eval_every = 0;
  int64_t checkpoint_every = 0;
};

struct TrainerOptions {
  std::filesystem::path output_dir = "output";
  int64_t epochs = 1;
  /// Stop after this many steps in all (0: epochs * batches per epoch).
  int64_t max_steps = 0;
  /// Log loss/lr/throughput every N steps.
  int64_t log_every = 10;
  /// Evaluate every N steps from step eval_start on (0: at the end of each epoch).
  int64_t eval_every = 0;
  int64_t eval_start = 0;
  /// The metric that ranks evaluations (must be a key of TrainTask::evaluate()).
  std::string metric = "acc";
  bool higher_is_better = true;
  /// Stop once an evaluation's metric reaches this value (at or better); unset: never.
  std::optional<double> stop_at{};
  /// Clip the gradients' global L2 norm (0: off).
  double clip_norm = 0;
  /// EMA of the weights, evaluated and saved as the best model (0: off).
  double ema_decay = 0;
  /// Save a checkpoint every N steps (0: at the end of each epoch) and keep the last N.
  int64_t checkpoint_every = 0;
  int keep_last = 2;
  /// Progress bar on a terminal, log lines otherwise; false: log lines only.
  bool progress_bar = true;
  /// Print nothing on stderr (files are still written).
  bool quiet = false;
  /// Under skiff launch: ZeRO stage (0: plain data parallelism; 1: each rank keeps the
  /// optimizer state of its share of the parameters, framework/distributed/zero.h).
  /// -1: SKIFF_ZERO_STAGE, else 0.
  int zero_stage = -1;
  /// Extra strings stored in every checkpoint's metadata (e.g. the recipe).
  std::map<std::string, std::string> metadata{};
};

struct FitResult {
  int64_t steps = 0;                     ///< steps taken in all (resumed ones included)
  double last_loss = 0;
  std::map<std::string, double> best{};  ///< the best evaluation (empty if none ran)
  int64_t best_step = -1;
  bool interrupted = false;              ///< stopped by Ctrl-C (a checkpoint was saved)
  bool reached_target = false;           ///< stopped early: the metric reached TrainerOptions::stop_at
  std::filesystem::path last_checkpoint{};
};

class Trainer {
 public:
  /// `scheduler` (may be null) is stepped once per training step.
  Trainer(TrainTask& task, optim::Optimizer& optimizer, optim::LRScheduler* scheduler, data::DataLoader& loader,
          TrainerOptions options);
  /// A run of `phases` in order. `loader` null: full-batch steps (TrainTask::loss
  /// gets an empty batch) and the run's length is the sum of the phases' steps.
  /// \throws ValueError for no phases, a phase without an optimizer, or a
  /// full-batch run whose last phase has no step count.
  Trainer(TrainTask& task, std::vector<TrainPhase> phases, data::DataLoader* loader, TrainerOptions options);
  ~Trainer();

  /// Trains to the end (or Ctrl-C). `resume_from`: a checkpoint file to continue from.
  /// \throws IoError / ValueError for an unreadable or mismatched checkpoint.
  FitResult fit(const std::optional<std::filesystem::path>& resume_from = std::nullopt);

  /// Total steps this run will take.
  int64_t total_steps() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The latest complete checkpoint in `output_dir`/checkpoints, if any.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& output_dir);

/// Loads model weights from a checkpoint (its model/ tensors) or a safetensors
/// weights file into `model`. \throws IoError / ValueError naming the file.
void load_weights(nn::Module& model, const std::filesystem::path& file, bool strict = true);

}  // namespace skiff::train
