#pragma once
/// \file pinn_training.h
/// A PINN run on the framework's Trainer: full-batch Adam steps, then L-BFGS
/// (strong Wolfe) in steps of `log_every` iterations, each step evaluated. The
/// run gets what every recipe gets: checkpoints with exact resume, Ctrl-C save,
/// metrics.jsonl, TensorBoard scalars, curves.png and best_model.safetensors
/// (ranked by the validation rel L2 of the first field, or by the loss when the
/// problem has no reference).
#include <filesystem>
#include <optional>

#include "framework/train/trainer.h"
#include "suites/science/pinn.h"

namespace skiff::science {

/// Where a PINN run writes and how it reports; the rest comes from TrainOptions.
struct PinnRunOptions {
  std::filesystem::path output_dir;
  int keep_last = 2;
  /// Stop after this many steps in all (0: every Adam and L-BFGS step).
  int64_t max_steps = 0;
  bool quiet = false;
  /// Stored in every checkpoint and weights file (e.g. the recipe).
  std::map<std::string, std::string> metadata{};
};

/// L-BFGS iterations per Trainer step: one evaluation per `log_every` iterations.
int64_t lbfgs_iterations_per_step(const TrainOptions& o);

/// Trains `solver` (Adam, then L-BFGS) and leaves the trained weights in its network.
/// `resume_from`: a checkpoint of the same recipe to continue from.
/// \throws ValueError when there is nothing to train (no Adam and no L-BFGS
/// iterations) or the checkpoint does not fit.
train::FitResult fit_pinn(PinnSolver& solver, const TrainOptions& o, const PinnRunOptions& run,
                          const std::optional<std::filesystem::path>& resume_from = std::nullopt);

}  // namespace skiff::science
