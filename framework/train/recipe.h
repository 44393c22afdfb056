#pragma once
/// \file recipe.h
/// The parts of a PaddleOCR-style training recipe that every suite shares:
/// the `Global` keys the Trainer reads, and the `Optimizer` section (its `lr`
/// schedule, `regularizer` and `clip_norm`), registered as components of the
/// kinds "optimizer", "lr" and "regularizer".
///
///   Global:
///     epoch_num: 20
///     print_batch_step: 10
///     eval_batch_step: [0, 200]     # [start, every N steps]; one number: every N
///     save_model_dir: ./output/rec
///     pretrained_model: ppocr-v4-rec  # zoo name or weights file (the suite reads it)
///     checkpoints:                    # a checkpoint to resume or evaluate
///     seed: 42
///   Optimizer:
///     name: Adam
///     beta1: 0.9
///     beta2: 0.999
///     clip_norm: 10
///     lr: {name: Cosine, learning_rate: 0.001, warmup_epoch: 1}
///     regularizer: {name: L2, factor: 3.0e-05}
///
/// Schedules step once per training iteration, as PaddleOCR's do; warm-up is
/// linear from 0 over warmup_epoch epochs.
#include <memory>
#include <vector>

#include "framework/config/schema.h"
#include "framework/optim/lr_scheduler.h"
#include "framework/optim/optimizer.h"
#include "framework/train/trainer.h"

namespace skiff::train {

/// The Global keys the Trainer understands (a suite appends its own).
std::vector<config::Key> global_keys();

/// The Optimizer section's schema (registers the components on first use).
config::Key optimizer_key();

/// TrainerOptions from Global (and Optimizer.clip_norm) for a run of
/// `steps_per_epoch` batches an epoch. `metric` and `higher_is_better` come
/// from the suite's metric.
TrainerOptions trainer_options(const config::Section& global, const config::Section& optimizer,
                               int64_t steps_per_epoch);

/// An optimizer and its per-step schedule.
struct OptimizerSetup {
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::LRScheduler> scheduler;
};

/// Builds the Optimizer section over `params` for a run of `epochs` x
/// `steps_per_epoch` steps. \throws ValueError naming the key for bad settings.
OptimizerSetup build_optimizer(const config::Section& optimizer, std::vector<Tensor> params, int64_t epochs,
                               int64_t steps_per_epoch);

/// Sets the default generator from Global.seed (default 42), so a run is repeatable.
void seed_run(const config::Section& global);

}  // namespace skiff::train
