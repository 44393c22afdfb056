#pragma once
/// \file zero.h
/// ZeRO stage 1 (optimizer-state sharding) on top of DataParallel: every rank still holds
/// the whole model and averages the whole gradient, but each parameter's optimizer state
/// (Adam's two moments, a momentum buffer) lives on one rank only, its owner, which alone
/// updates that parameter and then broadcasts it. With N ranks each holds about 1/N of the
/// optimizer state; the weights after every step are those of plain data parallelism.
///
/// Owners: parameters in the optimizer's order, largest first, each to the rank holding
/// the fewest bytes so far (the same on every rank). The optimizer is the ordinary one,
/// built over all parameters: it skips parameters without a gradient and creates state
/// lazily, so dropping the gradients of parameters another rank owns before step() is
/// enough to keep their state off this rank.
///
/// Checkpoints: gather_state() merges every rank's optimizer state on rank 0 (the keys
/// of different owners do not overlap), so a checkpoint holds the whole state as without
/// ZeRO and resumes with or without it; after loading one, drop_foreign_state() frees the
/// state of parameters this rank does not own.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/distributed/process_group.h"
#include "framework/optim/optimizer.h"

namespace skiff::distributed {

class ZeroRedundancy {
 public:
  /// \throws NotImplementedError for an optimizer with global state (L-BFGS) or a
  /// non-contiguous parameter.
  ZeroRedundancy(optim::Optimizer& optimizer, std::shared_ptr<ProcessGroup> group);

  /// Before optimizer.step() (after the gradients are averaged and clipped): drops the
  /// gradients of the parameters other ranks own.
  void before_step();
  /// After optimizer.step(): every owner broadcasts the parameters it updated.
  void after_step();

  /// Collective: on rank 0 the optimizer state of all ranks, merged; elsewhere this
  /// rank's own part (to be discarded).
  optim::OptimizerState gather_state();
  /// Frees the state of parameters other ranks own (after load_state_dict).
  void drop_foreign_state();

  /// Owner rank of each parameter, in the optimizer's flat order.
  const std::vector<int>& owners() const { return owner_; }
  /// Bytes of optimizer state buffers this rank holds now.
  int64_t state_bytes() const;
  /// "rank R updates K of N parameters (A of B MB) and holds C MB of optimizer state".
  std::string summary() const;

 private:
  optim::Optimizer& opt_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Tensor> params_;  // flat, in the optimizer's order
  std::vector<int> owner_;
};

}  // namespace skiff::distributed
