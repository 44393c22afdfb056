#pragma once
/// \file checkpoint.h
/// Training checkpoints: everything needed to resume a run bit-for-bit, in one
/// safetensors file, plus a manager that rotates them.
///
/// The API only uses name -> Tensor maps and strings, so io stays below nn and
/// optim: a trainer fills `model` from Module::state_dict(), `optimizer` from the
/// optimizer's tensor state, and the JSON strings from their `state()` methods.
///
/// File layout (a valid safetensors file any reader can open):
///   - tensors `model/<name>`, `optimizer/<name>`, `extra/<name>`;
///   - `__metadata__`: `skiff.format` = "skiff.checkpoint.v1", `skiff.step`,
///     `skiff.optimizer`, `skiff.scheduler` (opaque JSON strings), `skiff.rng`
///     (JSON object name -> Generator::state()), `skiff.data` (JSON object
///     loader name -> its position string, see data::LoaderState), `skiff.metrics` (JSON object
///     name -> number), `skiff.metadata` (JSON object of user strings).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/io/safetensors.h"

namespace skiff::io {

/// One training checkpoint.
struct Checkpoint {
  int64_t step = 0;
  TensorMap model;      ///< model state dict (parameters + buffers)
  TensorMap optimizer;  ///< optimizer tensor state (moments, ...), names chosen by the optimizer
  TensorMap extra;      ///< anything else (EMA weights, ...)
  std::string optimizer_state;  ///< optimizer non-tensor state (hyper-parameters, counters) as JSON
  std::string scheduler_state;  ///< LR scheduler state as JSON
  std::map<std::string, std::string> rng;  ///< generator name -> Generator::state()
  /// data-loader name -> its position in the data stream (data::LoaderState::str()), so a
  /// resumed run continues mid-epoch with the same batches. Absent in older files: empty.
  std::map<std::string, std::string> data;
  std::map<std::string, double> metrics;   ///< e.g. {"val_acc": 0.97}; keep-best ranks by one of them
  Metadata metadata;                       ///< free-form user strings (config hash, git revision, ...)
};

/// Writes `ckpt` atomically to `path` (safetensors, see the file comment).
/// \throws IoError for OS failures; ValueError/TypeError as save_safetensors.
void save_checkpoint(const std::filesystem::path& path, const Checkpoint& ckpt);

/// Reads a checkpoint written by save_checkpoint (tensors are mmap views).
/// \throws IoError if the file is unreadable, malformed, or not a skiff checkpoint.
Checkpoint load_checkpoint(const std::filesystem::path& path, const LoadOptions& options = {});

/// Options of CheckpointManager.
struct CheckpointManagerOptions {
  std::string prefix = "ckpt";   ///< files are `<prefix>-<step, 10 digits>.safetensors`
  int keep_last = 3;             ///< keep the N most recent steps (<= 0: keep all)
  int keep_best = 0;             ///< also keep the N best by `metric` (0: none)
  std::string metric = {};       ///< metric name used by keep_best and best()
  bool higher_is_better = true;  ///< accuracy: true; loss: false
};

/// A directory of rotating checkpoints.
///
/// save() writes atomically and then deletes files that are neither among the
/// `keep_last` most recent nor the `keep_best` best. A crash at any point leaves
/// only complete checkpoints under final names; a stale temporary file from a
/// killed writer is hidden (".ckpt-...tmp.XXXXXX") and is removed when a manager
/// is next constructed on the directory. One manager per directory at a time.
class CheckpointManager {
 public:
  /// Creates `dir` if needed. \throws IoError if it cannot, ValueError if
  /// keep_best > 0 without a metric.
  CheckpointManager(std::filesystem::path dir, CheckpointManagerOptions options = {});

  /// Saves `ckpt` as step ckpt.step (replacing a file of the same step) and
  /// applies retention. Returns the file's path. \throws ValueError if keep_best
  /// is on and ckpt.metrics lacks the metric.
  std::filesystem::path save(const Checkpoint& ckpt);

  /// Complete checkpoints in the directory, by increasing step.
  std::vector<std::filesystem::path> list() const;
  /// The most recent checkpoint whose header validates (for resume), if any.
  std::optional<std::filesystem::path> latest() const;
  /// The best checkpoint by the metric, if any has it.
  std::optional<std::filesystem::path> best() const;
  /// Step encoded in a checkpoint file name, or -1 if the name is not one of ours.
  int64_t step_of(const std::filesystem::path& file) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  void apply_retention();
  std::optional<double> metric_of(const std::filesystem::path& file) const;

  std::filesystem::path dir_;
  CheckpointManagerOptions opt_;
};

}  // namespace skiff::io
