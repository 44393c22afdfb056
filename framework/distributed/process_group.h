#pragma once
/// \file process_group.h
/// Collectives between processes (ranks), over Gloo's TCP transport.
///
/// A group is made once per process, from the environment that `skiff launch` sets
/// (world()) or from explicit options (ProcessGroup::init): rank 0 hosts the
/// rendezvous store (store.h) at the master address, every rank publishes the
/// address of its Gloo device there, and Gloo connects every pair of ranks.
///
/// Every collective must be called by every rank of the group, in the same order.
/// Tensors must be contiguous; all_reduce, reduce_scatter and all_gather need the
/// same shape and dtype on every rank. Operations of one group run one at a time
/// (a mutex), so a background thread may share it with the main thread.
///
/// Failure: a rank that dies closes its connections, and the others' next
/// collective fails at once; a rank that stops answering makes the others fail
/// after the group's timeout. Both raise DistributedError (exit code 6) naming the
/// operation and the rank, never a hang.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::distributed {

enum class ReduceOp { Sum, Avg, Max, Min };

struct InitOptions {
  int rank = 0;
  int world_size = 1;
  /// Where rank 0 hosts the rendezvous store (every rank must reach it).
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  /// Instead of the master's store: Gloo's file store in this directory, which every
  /// rank must see (one machine, or a shared file system). The directory must be empty
  /// or new for each job.
  std::string store_dir;
  /// The address this rank's Gloo device listens on (other ranks connect to it).
  /// Empty: 127.0.0.1 when the master is on loopback, else this host's name.
  std::string host_addr;
  /// How long a collective or the rendezvous waits for a silent peer.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

/// Options from SKIFF_RANK, SKIFF_WORLD_SIZE, SKIFF_MASTER_ADDR, SKIFF_MASTER_PORT,
/// SKIFF_STORE_DIR, SKIFF_HOST_ADDR and SKIFF_DIST_TIMEOUT (seconds); nullopt when SKIFF_WORLD_SIZE is
/// unset. \throws ValueError naming the variable that is malformed or inconsistent.
std::optional<InitOptions> options_from_env();

class ProcessGroup {
 public:
  /// Joins the group: returns once every rank has arrived and every pair is connected.
  /// \throws ValueError for bad options, IoError when rank 0 cannot listen on the master
  /// port, DistributedError when a rank does not arrive within the timeout or the master
  /// cannot be reached.
  static std::shared_ptr<ProcessGroup> init(const InitOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int size() const;
  std::chrono::milliseconds timeout() const;

  /// In place: every rank ends with the reduction of all ranks' tensors (float32,
  /// float64, int32, int64).
  void all_reduce(Tensor& t, ReduceOp op = ReduceOp::Sum);
  /// In place: every rank ends with `root`'s tensor (any dtype).
  void broadcast(Tensor& t, int root = 0);
  /// [size(), *t.shape]: the tensors of all ranks, stacked in rank order.
  Tensor all_gather(const Tensor& t);
  /// The reduction of all ranks' `t`, split along dim 0 into size() equal parts:
  /// rank r gets part r. \throws ShapeError when dim 0 is not a multiple of size().
  Tensor reduce_scatter(const Tensor& t, ReduceOp op = ReduceOp::Sum);
  void barrier();
  /// Point to point: `t` goes to rank `dst`, which receives it with recv(.., src).
  void send(const Tensor& t, int dst, int tag = 0);
  /// Fills `t` (its shape and dtype must match what was sent).
  void recv(Tensor& t, int src, int tag = 0);

  /// A group of some of this group's ranks (numbered here). Every rank of this group
  /// must call it with the same list, in the same order as its other new_group calls;
  /// ranks outside the list get nullptr. \throws ValueError for a bad list.
  std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks);

 private:
  struct Impl;
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The process-wide group of a distributed run: made on first call from the
/// environment (options_from_env), nullptr when SKIFF_WORLD_SIZE is unset or 1.
std::shared_ptr<ProcessGroup> world();
/// Rank and size of world(), or 0 and 1 when the run is not distributed.
int world_rank();
int world_size();

}  // namespace skiff::distributed
