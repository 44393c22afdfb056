// Tests of the DataLoader's resume positions (LoaderState, epoch(e, start_batch))
// and of iterable (streaming) datasets.
#include <gtest/gtest.h>

#include <atomic>

#include "framework/core/error.h"
#include "framework/data/dataloader.h"
#include "framework/ops/ops.h"

namespace skiff::data {
namespace {

// Sample i = {"x": [i, i + 0.5 + noise]} where the noise comes from the per-sample generator.
std::shared_ptr<Dataset> noisy_dataset(int64_t n) {
  auto base = std::make_shared<TensorDataset>(Example{{"x", arange(0.0, double(n), 1.0, DType::Float32)}});
  return std::make_shared<MapDataset>(base, [](Example ex, Generator& gen) {
    float i = ex["x"].item<float>();
    ex["x"] = from_vector<float>({i, i + 0.5f + float(gen.uniform())});
    return ex;
  });
}

std::vector<std::vector<float>> drain(DataLoader::Epoch& ep) {
  std::vector<std::vector<float>> out;
  while (auto b = ep.next()) out.push_back(b->at("x").to_vector<float>());
  return out;
}

TEST(LoaderStateTest, FormatsAndParses) {
  LoaderState s{123456789012345ull, 3, 17};
  EXPECT_EQ(s.str(), "skiff.loader.v1 123456789012345 3 17");
  EXPECT_EQ(LoaderState::parse(s.str()), s);
  EXPECT_THROW(LoaderState::parse(""), ValueError);
  EXPECT_THROW(LoaderState::parse("skiff.loader.v1 1 2"), ValueError);
  EXPECT_THROW(LoaderState::parse("skiff.loader.v2 1 2 3"), ValueError);
  EXPECT_THROW(LoaderState::parse("skiff.loader.v1 1 2 3 4"), ValueError);
  EXPECT_THROW(LoaderState::parse("skiff.loader.v1 1 -2 3"), ValueError);
}

TEST(DataLoaderResumeTest, StartBatchGivesTheTailOfTheEpochForAnyWorkerCount) {
  auto ds = noisy_dataset(29);
  DataLoader full(ds, {.batch_size = 4, .shuffle = true, .seed = 11});
  auto ep = full.epoch(2);
  auto all = drain(ep);
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(ep.state(), (LoaderState{11, 2, 8}));
  for (int workers : {0, 1, 3}) {
    DataLoader dl(ds, {.batch_size = 4, .shuffle = true, .seed = 11, .num_workers = workers, .prefetch = 1});
    for (int64_t start : {0, 1, 5, 7, 8}) {
      auto part = dl.epoch(2, start);
      EXPECT_EQ(part.state(), (LoaderState{11, 2, start}));
      auto tail = drain(part);
      EXPECT_EQ(tail, std::vector<std::vector<float>>(all.begin() + start, all.end()))
          << "workers " << workers << " start " << start;
    }
    EXPECT_THROW(dl.epoch(0, 9), ValueError);
    EXPECT_THROW(dl.epoch(0, -1), ValueError);
  }
}

TEST(DataLoaderResumeTest, StateAfterEachBatchResumesRightAfterIt) {
  auto ds = noisy_dataset(20);
  DataLoader dl(ds, {.batch_size = 3, .shuffle = true, .seed = 4, .num_workers = 2});
  auto ep = dl.epoch(1);
  std::vector<std::vector<float>> seen;
  LoaderState saved;
  for (int i = 0; i < 3; ++i) seen.push_back(ep.next()->at("x").to_vector<float>());
  saved = ep.state();
  auto rest = drain(ep);
  // A new loader (as in a new process) resumes where `saved` points.
  DataLoader again(ds, {.batch_size = 3, .shuffle = true, .seed = 4});
  auto resumed = again.resume(LoaderState::parse(saved.str()));
  EXPECT_EQ(drain(resumed), rest);
  DataLoader other_seed(ds, {.batch_size = 3, .shuffle = true, .seed = 5});
  EXPECT_THROW(other_seed.resume(saved), ValueError);
}

// A synthetic stream of n examples {"x": [p]} (p = position) that counts what it
// produces. With `seekable` it overrides the sharded stream and jumps over the
// blocks of other shards; otherwise the default shard reader filters the full stream.
class CountingStream : public IterableDataset {
 public:
  CountingStream(int64_t n, bool seekable, int64_t fail_at = -1) : n_(n), seekable_(seekable), fail_at_(fail_at) {}
  ExampleStream stream(int64_t epoch) const override { return make(epoch, StreamShard{}); }
  ExampleStream stream(int64_t epoch, const StreamShard& shard) const override {
    if (!seekable_) return IterableDataset::stream(epoch, shard);
    check_shard(shard);
    return make(epoch, shard);
  }
  mutable std::atomic<int64_t> produced{0};

 private:
  ExampleStream make(int64_t epoch, StreamShard shard) const {
    auto pos = std::make_shared<int64_t>(0);
    return [this, epoch, shard, pos]() -> std::optional<Example> {
      while (*pos < n_ && !shard.contains(*pos)) ++*pos;  // seek: no example is produced for skipped positions
      if (*pos >= n_) return std::nullopt;
      const int64_t p = (*pos)++;
      if (p == fail_at_) SKIFF_THROW(IoError, "record {} is corrupt", p);
      ++produced;
      return Example{{"x", from_vector<float>({float(p + 1000 * epoch)})}};
    };
  }
  int64_t n_;
  bool seekable_;
  int64_t fail_at_;
};

std::vector<std::vector<float>> expected_batches(int64_t n, int64_t bs, bool drop_last, int64_t epoch,
                                                 int64_t start = 0) {
  std::vector<std::vector<float>> out;
  for (int64_t b = start; b * bs < n; ++b) {
    std::vector<float> v;
    for (int64_t p = b * bs; p < std::min(n, (b + 1) * bs); ++p) v.push_back(float(p + 1000 * epoch));
    if (drop_last && int64_t(v.size()) < bs) break;
    out.push_back(v);
  }
  return out;
}

TEST(IterableDatasetTest, BatchesInStreamOrderForAnyWorkerCount) {
  for (bool seekable : {true, false}) {
    for (int workers : {0, 1, 2, 3}) {
      for (bool drop_last : {false, true}) {
        auto ds = std::make_shared<CountingStream>(23, seekable);
        DataLoader dl(std::static_pointer_cast<const IterableDataset>(ds),
                      {.batch_size = 4, .drop_last = drop_last, .num_workers = workers, .prefetch = 1});
        EXPECT_TRUE(dl.is_iterable());
        EXPECT_EQ(dl.num_batches(), -1);
        auto ep = dl.epoch(1);
        auto got = drain(ep);
        EXPECT_EQ(got, expected_batches(23, 4, drop_last, 1))
            << "seekable " << seekable << " workers " << workers << " drop_last " << drop_last;
        EXPECT_EQ(ep.state().batch, int64_t(got.size()));
        EXPECT_FALSE(ep.next().has_value());  // stays finished
        // A seekable stream is read once in total; with the default shard reader each
        // worker reads the stream (up to where it is stopped once the epoch ends).
        if (seekable) {
          EXPECT_EQ(ds->produced.load(), 23);
        } else {
          EXPECT_GE(ds->produced.load(), 23);
          EXPECT_LE(ds->produced.load(), 23 * std::max(workers, 1));
        }
      }
    }
  }
}

TEST(IterableDatasetTest, ShapesAndEmptyAndExactMultiple) {
  auto ds = std::make_shared<CountingStream>(8, true);
  DataLoader dl(std::static_pointer_cast<const IterableDataset>(ds), {.batch_size = 4, .num_workers = 2});
  int n = 0;
  for (Example& b : dl.epoch(0)) {
    EXPECT_EQ(b.at("x").shape(), (Shape{4, 1}));
    ++n;
  }
  EXPECT_EQ(n, 2);
  DataLoader empty(std::static_pointer_cast<const IterableDataset>(std::make_shared<CountingStream>(0, false)),
                   {.batch_size = 4, .num_workers = 2});
  EXPECT_FALSE(empty.epoch(0).next().has_value());
}

TEST(IterableDatasetTest, ResumeSkipsSeenBatches) {
  for (bool seekable : {true, false}) {
    for (int workers : {0, 3}) {
      auto ds = std::make_shared<CountingStream>(30, seekable);
      DataLoader dl(std::static_pointer_cast<const IterableDataset>(ds), {.batch_size = 4, .num_workers = workers});
      auto ep = dl.resume(LoaderState{0, 2, 5});
      EXPECT_EQ(drain(ep), expected_batches(30, 4, false, 2, 5)) << seekable << " " << workers;
      if (seekable) {
        EXPECT_EQ(ds->produced.load(), 30 - 20);  // the first 5 batches were never produced
      }
    }
  }
}

TEST(IterableDatasetTest, ErrorsNameTheStreamPositionAndShuffleIsRejected) {
  for (int workers : {0, 2}) {
    auto ds = std::make_shared<CountingStream>(20, true, /*fail_at=*/9);
    DataLoader dl(std::static_pointer_cast<const IterableDataset>(ds), {.batch_size = 4, .num_workers = workers});
    auto ep = dl.epoch(0);
    EXPECT_TRUE(ep.next().has_value());
    EXPECT_TRUE(ep.next().has_value());
    try {
      ep.next();
      ADD_FAILURE() << "expected an IoError";
    } catch (const IoError& e) {
      const std::string msg = e.full_message();
      EXPECT_NE(msg.find("record 9 is corrupt"), std::string::npos) << msg;
      EXPECT_NE(msg.find("stream position 9 (batch 2)"), std::string::npos) << msg;
    }
    EXPECT_FALSE(ep.next().has_value());
  }
  auto ds = std::make_shared<CountingStream>(4, true);
  EXPECT_THROW(DataLoader(std::static_pointer_cast<const IterableDataset>(ds), {.batch_size = 2, .shuffle = true}),
               ValueError);
  EXPECT_THROW(ds->stream(0, StreamShard{.shard = 2, .num_shards = 2}), ValueError);
  EXPECT_THROW(ds->stream(0, StreamShard{.block = 0}), ValueError);
}

TEST(IterableDatasetTest, EarlyStopJoinsWorkers) {
  auto ds = std::make_shared<CountingStream>(1000, false);
  DataLoader dl(std::static_pointer_cast<const IterableDataset>(ds),
                {.batch_size = 2, .num_workers = 3, .prefetch = 1});
  {
    auto ep = dl.epoch(0);
    EXPECT_TRUE(ep.next().has_value());
  }  // destroying the epoch stops the workers mid-stream
  EXPECT_LT(ds->produced.load(), 3000);
}

}  // namespace
}  // namespace skiff::data
