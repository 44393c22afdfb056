#pragma once
/// \file dataloader.h
/// DataLoader: batches, seeded shuffling and background loading.
///
/// Determinism: for a given (seed, epoch) the sequence of batches is identical for
/// any num_workers. The permutation is drawn on the calling thread, and each
/// sample's augmentation generator is seeded from (seed, epoch, index) rather
/// than shared between workers.
///
/// Workers: batch b is built by worker b % num_workers, which keeps at most
/// `prefetch` finished batches in its queue; the consumer takes batches in order,
/// so memory is bounded and order is preserved. An exception thrown while
/// loading a sample is rethrown from next() in the consumer, with the sample
/// index added as context (skiff errors keep their type; others become
/// skiff::Error with the original message).
///
/// Iterable datasets (streams without indexing) are batched in stream order:
/// batch b holds stream positions b*batch_size .. (b+1)*batch_size - 1. With
/// workers, worker w reads the shard StreamShard{w, num_workers, batch_size} of the
/// stream, i.e. its own batches, so the batches are the same for any num_workers.
/// Shuffling a stream needs a buffer and belongs in the dataset; `shuffle` is
/// rejected for iterable datasets.
///
/// Resume: LoaderState (seed, epoch, next batch) is a loader's whole position,
/// because the order and the augmentation are pure functions of (seed, epoch,
/// index). A checkpoint stores Epoch::state(); resume() continues with exactly the
/// batches the interrupted run would have seen next. Indexed datasets skip the
/// earlier batches without loading them; streams are re-read up to the position
/// (the default IterableDataset shard reader) or seek (datasets that override it).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/data/dataset.h"

namespace skiff::data {

/// Turns a list of examples into one batch.
using CollateFn = std::function<Example(std::vector<Example>&)>;

/// Default collation: for each key, stack the examples' tensors along a new
/// leading dimension ([B, ...]). \throws ShapeError naming the key when shapes
/// differ, ValueError when the examples have different keys.
Example default_collate(std::vector<Example>& examples);

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  uint64_t seed = 0;        ///< seeds shuffling and per-sample augmentation
  bool drop_last = false;   ///< drop a final batch smaller than batch_size
  int num_workers = 0;      ///< 0: load on the calling thread
  int prefetch = 2;         ///< finished batches queued per worker
  CollateFn collate = {};   ///< empty: default_collate
  /// Distributed training: this process loads shard `shard` of `num_shards` of every
  /// epoch's order (positions shard, shard + num_shards, ...), the order padded by
  /// wrapping around to a multiple of num_shards so every shard has the same number
  /// of batches (ranks must take the same number of steps). With batch size B, batch
  /// k of the N shards together holds batch k of one unsharded loader with batch N*B.
  int shard = 0;
  int num_shards = 1;
};

/// Where a loader is: batch `batch` of epoch `epoch` is the next one to load, for a
/// loader seeded with `seed`. batch == num_batches() means the epoch is finished.
struct LoaderState {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t batch = 0;
  /// "skiff.loader.v1 <seed> <epoch> <batch>" (stored in io::Checkpoint::data).
  std::string str() const;
  /// Inverse of str(). \throws ValueError for anything else.
  static LoaderState parse(const std::string& s);
  bool operator==(const LoaderState&) const = default;
};

class DataLoader {
 public:
  /// \throws ValueError for batch_size < 1, num_workers < 0 or prefetch < 1.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  /// Batches a stream (see the file comment). \throws ValueError as above, and for shuffle.
  DataLoader(std::shared_ptr<const IterableDataset> dataset, DataLoaderOptions options);
  ~DataLoader();

  /// Whether the dataset is a stream (IterableDataset).
  bool is_iterable() const { return stream_ != nullptr; }
  /// Batches per epoch; -1 for a stream, whose length is unknown until it ends.
  int64_t num_batches() const;
  /// Sample indices of `epoch` in load order (the shuffled permutation, or 0..N-1;
  /// with shards, this shard's part of it).
  /// \throws ValueError for a stream.
  std::vector<int64_t> indices(int64_t epoch) const;
  const DataLoaderOptions& options() const { return opt_; }
  /// Switches to shard `shard` of `num_shards` (see DataLoaderOptions::shard).
  /// \throws ValueError for a bad shard, NotImplementedError for a stream.
  void set_shard(int shard, int num_shards);

  /// One pass over the data. Destroying it stops and joins its workers.
  class Epoch {
   public:
    ~Epoch();
    Epoch(Epoch&&) noexcept;
    /// The next batch, or nullopt after the last. Rethrows loading errors.
    std::optional<Example> next();
    /// Position of the batch the next call to next() returns: save it after a
    /// training step to resume right after that step's batch.
    LoaderState state() const;

    /// Input iterator, for `for (Example& batch : loader.epoch(e))`.
    class Iterator {
     public:
      Example& operator*() { return *cur_; }
      Iterator& operator++() { cur_ = ep_->next(); return *this; }
      bool operator!=(const Iterator& o) const { return cur_.has_value() != o.cur_.has_value(); }

     private:
      friend class Epoch;
      Epoch* ep_ = nullptr;
      std::optional<Example> cur_;
    };
    Iterator begin();
    Iterator end() { return Iterator(); }

   private:
    friend class DataLoader;
    struct State;
    explicit Epoch(std::unique_ptr<State> s);
    std::unique_ptr<State> s_;
  };

  /// Starts epoch `epoch` (its number changes the shuffle and the augmentation) at
  /// batch `start_batch`: earlier batches are skipped, later ones are exactly those
  /// of the full epoch. \throws ValueError for start_batch < 0 or, for an indexed
  /// dataset, start_batch > num_batches().
  Epoch epoch(int64_t epoch, int64_t start_batch = 0);
  /// Continues from a saved position: epoch(state.epoch, state.batch).
  /// \throws ValueError if state.seed is not this loader's seed (the order would differ).
  Epoch resume(const LoaderState& state);

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::shared_ptr<const IterableDataset> stream_;
  DataLoaderOptions opt_;
};

}  // namespace skiff::data
