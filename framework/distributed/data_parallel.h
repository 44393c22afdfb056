#pragma once
/// \file data_parallel.h
/// Data parallelism: every rank holds the whole model, trains on its own shard of each
/// batch, and the gradients are averaged across ranks before the optimizer step, so
/// N ranks with batch B take the steps one process takes with batch N*B.
///
/// The gradients are averaged in buckets (25 MiB of parameters each by default, PyTorch's
/// default too, in the reverse of registration order: roughly the order backward produces
/// them). Smaller buckets overlap more of the communication with backward but pay a
/// collective's fixed cost more often; on 2 cores, where the communication competes with
/// backward for the same cores, a 7.4 MB MLP stepped in 20 ms with one bucket and 25 ms
/// with 1 MiB buckets (bench/compare_ddp.sh). A parameter's
/// post-accumulate hook marks it ready; a bucket whose parameters are all ready is
/// handed to a communication thread, which all-reduces it while backward goes on
/// with the layers below. Buckets are always started in the same order on every
/// rank (a bucket waits for the ones before it), so the ranks' collectives match
/// even when a parameter gets no gradient on some rank: finish() starts whatever is
/// left, with zeros for the missing gradients.
///
/// Batch norm statistics stay per rank (no SyncBatchNorm); buffers are broadcast from
/// rank 0 once, at construction.
#include <cstdint>
#include <memory>

#include "framework/distributed/process_group.h"
#include "framework/nn/module.h"

namespace skiff::distributed {

class DataParallel {
 public:
  /// Broadcasts rank 0's parameters and buffers (every rank starts from the same
  /// weights) and installs the gradient hooks. The model must outlive this object.
  DataParallel(nn::Module& model, std::shared_ptr<ProcessGroup> group, int64_t bucket_bytes = int64_t(25) << 20);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  /// Call after each backward(): returns when every parameter's .grad holds the
  /// average over the ranks. \throws DistributedError when a peer failed.
  void finish_gradient_sync();

  /// How many buckets the parameters were split into.
  int64_t num_buckets() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skiff::distributed
