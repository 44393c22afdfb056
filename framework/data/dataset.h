#pragma once
/// \file dataset.h
/// Datasets: indexable (Dataset) and streaming (IterableDataset).
///
/// An Example is a map of named tensors ({"image": [C, H, W], "label": []}); the
/// DataLoader collates examples into batches with the same keys.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "framework/core/rng.h"
#include "framework/tensor/tensor.h"

namespace skiff::data {

/// One sample (or, after collation, one batch): named tensors.
using Example = std::map<std::string, Tensor>;

/// A dataset with random access. Implementations must allow concurrent get()
/// calls from several DataLoader workers.
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// Number of samples.
  virtual int64_t size() const = 0;
  /// Sample i, 0 <= i < size(). \throws IndexError otherwise.
  virtual Example get(int64_t index) const = 0;
  /// Sample i with a generator for random augmentation. The DataLoader calls this
  /// with a generator seeded from (seed, epoch, index), so results do not depend
  /// on which worker runs it. Default: ignores gen.
  virtual Example get(int64_t index, Generator& gen) const { return get(index); }
};

/// Next example of a stream, or nullopt at the end.
using ExampleStream = std::function<std::optional<Example>()>;

/// The part of a stream one reader wants. The stream is cut into blocks of `block`
/// consecutive examples (block k holds positions k*block .. k*block + block - 1);
/// the shard holds the blocks k with k >= first_block and k % num_shards == shard,
/// in stream order. The DataLoader uses one block per batch, so worker w of n reads
/// exactly the batches w, w + n, ... and first_block skips the batches a resumed
/// run has already seen.
struct StreamShard {
  int64_t shard = 0;
  int64_t num_shards = 1;
  int64_t block = 1;
  int64_t first_block = 0;
  /// Whether stream position `position` belongs to the shard.
  bool contains(int64_t position) const {
    const int64_t k = position / block;
    return k >= first_block && k % num_shards == shard;
  }
};

/// A dataset read sequentially (a file of records, a generator of synthetic data).
/// Streams of different epochs or shards may be open at the same time (one per
/// DataLoader worker), each used by one thread.
class IterableDataset {
 public:
  virtual ~IterableDataset() = default;
  /// A fresh stream over every example of `epoch`.
  virtual ExampleStream stream(int64_t epoch) const = 0;
  /// A fresh stream over the examples of `shard` only, in stream order. The default
  /// reads stream(epoch) and drops the other examples, which is correct for any
  /// source but makes every worker read (and pay for) the whole stream; sources that
  /// can seek (indexed record files, synthetic generators) should override it.
  /// 	hrows ValueError for an invalid shard (block < 1, num_shards < 1, shard or
  /// first_block out of range).
  virtual ExampleStream stream(int64_t epoch, const StreamShard& shard) const;
};

/// Checks a StreamShard. 	hrows ValueError naming the bad field.
void check_shard(const StreamShard& shard);

/// Samples taken from the leading dimension of named tensors (all of equal
/// length N): get(i) = {name: tensor[i]}. \throws ShapeError on unequal lengths.
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(Example tensors);
  using Dataset::get;
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override;

 private:
  Example tensors_;
  int64_t n_ = 0;
};

/// Applies fn(example, gen) to every sample of a base dataset (augmentation).
class MapDataset : public Dataset {
 public:
  using Fn = std::function<Example(Example, Generator&)>;
  MapDataset(std::shared_ptr<const Dataset> base, Fn fn) : base_(std::move(base)), fn_(std::move(fn)) {}
  int64_t size() const override { return base_->size(); }
  /// Uses a generator seeded by the index (reproducible outside a DataLoader).
  Example get(int64_t index) const override;
  Example get(int64_t index, Generator& gen) const override { return fn_(base_->get(index, gen), gen); }

 private:
  std::shared_ptr<const Dataset> base_;
  Fn fn_;
};

/// Seed for the generator of one sample: a hash of (seed, epoch, index) so that
/// neighbouring indices get unrelated streams.
uint64_t sample_seed(uint64_t seed, int64_t epoch, int64_t index);

}  // namespace skiff::data
