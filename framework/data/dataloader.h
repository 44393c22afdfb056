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

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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
};

class DataLoader {
 public:
  /// \throws ValueError for batch_size < 1, num_workers < 0 or prefetch < 1.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  ~DataLoader();

  /// Batches per epoch.
  int64_t num_batches() const;
  /// Sample indices of `epoch` in load order (the shuffled permutation, or 0..N-1).
  std::vector<int64_t> indices(int64_t epoch) const;

  /// One pass over the data. Destroying it stops and joins its workers.
  class Epoch {
   public:
    ~Epoch();
    Epoch(Epoch&&) noexcept;
    /// The next batch, or nullopt after the last. Rethrows loading errors.
    std::optional<Example> next();

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

  /// Starts epoch `epoch` (its number changes the shuffle and the augmentation).
  Epoch epoch(int64_t epoch);

 private:
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions opt_;
};

}  // namespace skiff::data
