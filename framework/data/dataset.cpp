#include "framework/data/dataset.h"

#include "framework/core/error.h"
#include "framework/core/splitmix.h"
#include "framework/ops/ops.h"

namespace skiff::data {


uint64_t sample_seed(uint64_t seed, int64_t epoch, int64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ uint64_t(epoch)) ^ uint64_t(index));
}

TensorDataset::TensorDataset(Example tensors) : tensors_(std::move(tensors)) {
  SKIFF_CHECK(!tensors_.empty(), "TensorDataset: no tensors given");
  bool first = true;
  for (const auto& [name, t] : tensors_) {
    SKIFF_CHECK_SHAPE(t.dim() >= 1, "TensorDataset: tensor '{}' is 0-dimensional", name);
    if (first) n_ = t.size(0), first = false;
    SKIFF_CHECK_SHAPE(t.size(0) == n_, "TensorDataset: tensor '{}' has {} samples, expected {} (shape {})", name,
                      t.size(0), n_, t.shape());
  }
}

Example TensorDataset::get(int64_t index) const {
  SKIFF_CHECK_INDEX(index >= 0 && index < n_, "TensorDataset: index {} out of range [0, {})", index, n_);
  Example out;
  for (const auto& [name, t] : tensors_) out.emplace(name, select(t, 0, index));
  return out;
}

void check_shard(const StreamShard& s) {
  SKIFF_CHECK(s.block >= 1, "StreamShard: block must be >= 1, got {}", s.block);
  SKIFF_CHECK(s.num_shards >= 1, "StreamShard: num_shards must be >= 1, got {}", s.num_shards);
  SKIFF_CHECK(s.shard >= 0 && s.shard < s.num_shards, "StreamShard: shard {} out of range [0, {})", s.shard,
              s.num_shards);
  SKIFF_CHECK(s.first_block >= 0, "StreamShard: first_block must be >= 0, got {}", s.first_block);
}

ExampleStream IterableDataset::stream(int64_t epoch, const StreamShard& shard) const {
  check_shard(shard);
  ExampleStream all = stream(epoch);
  if (shard.num_shards == 1 && shard.first_block == 0) return all;
  auto position = std::make_shared<int64_t>(0);
  return [all = std::move(all), shard, position]() -> std::optional<Example> {
    while (auto ex = all()) {
      if (shard.contains((*position)++)) return ex;
    }
    return std::nullopt;
  };
}

Example MapDataset::get(int64_t index) const {
  Generator gen(sample_seed(0, 0, index));
  return get(index, gen);
}

}  // namespace skiff::data
