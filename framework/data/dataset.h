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

/// A dataset read sequentially (a file of records, a generator of synthetic data).
class IterableDataset {
 public:
  virtual ~IterableDataset() = default;
  /// A fresh stream for `epoch`; independent streams may be opened one after another.
  virtual ExampleStream stream(int64_t epoch) const = 0;
};

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
