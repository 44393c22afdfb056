// Tests of framework/data/dataloader.h and dataset.h.
#include <algorithm>
#include "framework/data/dataloader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "framework/ops/ops.h"

namespace skiff::data {
namespace {

// Sample i = {"x": [2] float {i, random}, "y": [] int64 i}; the random part comes
// from the per-sample generator, so determinism covers augmentation too.
class ToyDataset : public Dataset {
 public:
  explicit ToyDataset(int64_t n, int64_t fail_at = -1) : n_(n), fail_at_(fail_at) {}
  int64_t size() const override { return n_; }
  Example get(int64_t i) const override {
    Generator g(0);
    return get(i, g);
  }
  Example get(int64_t i, Generator& gen) const override {
    if (i == fail_at_) SKIFF_THROW(IoError, "toy: cannot read record {}", i);
    // Uneven work so that workers finish out of order.
    if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    return {{"x", from_vector<float>({float(i), float(gen.uniform())})}, {"y", scalar_tensor(double(i), DType::Int64)}};
  }

 private:
  int64_t n_, fail_at_;
};

std::vector<std::vector<float>> run_epoch(DataLoader& dl, int64_t epoch) {
  std::vector<std::vector<float>> out;
  for (Example& b : dl.epoch(epoch)) out.push_back(b.at("x").to_vector<float>());
  return out;
}

TEST(DataLoaderTest, SequentialBatchesInOrder) {
  auto ds = std::make_shared<ToyDataset>(10);
  DataLoader dl(ds, {.batch_size = 4});
  EXPECT_EQ(dl.num_batches(), 3);
  auto ep = dl.epoch(0);
  auto b0 = ep.next();
  ASSERT_TRUE(b0);
  EXPECT_EQ(b0->at("x").shape(), (Shape{4, 2}));
  EXPECT_EQ(b0->at("y").to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(ep.next()->at("y").to_vector<int64_t>(), (std::vector<int64_t>{4, 5, 6, 7}));
  auto last = ep.next();
  EXPECT_EQ(last->at("y").to_vector<int64_t>(), (std::vector<int64_t>{8, 9}));
  EXPECT_FALSE(ep.next());
}

TEST(DataLoaderTest, DropLast) {
  auto ds = std::make_shared<ToyDataset>(10);
  DataLoader dl(ds, {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(dl.num_batches(), 2);
  auto batches = run_epoch(dl, 0);
  ASSERT_EQ(batches.size(), 2u);
  for (auto& b : batches) EXPECT_EQ(b.size(), 8u);
}

// Distributed shards: batch k of N shards with batch B together is batch k of one loader
// with batch N*B; uneven sizes are padded by wrapping so every shard has as many batches.
TEST(DataLoaderTest, ShardsSplitEachGlobalBatchAndPadToEqualLength) {
  auto ds = std::make_shared<ToyDataset>(12);
  DataLoader whole(ds, {.batch_size = 6, .shuffle = true, .seed = 5});
  std::vector<DataLoader> shards;
  for (int r = 0; r < 3; ++r) shards.emplace_back(ds, DataLoaderOptions{.batch_size = 2, .shuffle = true, .seed = 5,
                                                                        .shard = r, .num_shards = 3});
  for (auto& s : shards) EXPECT_EQ(s.num_batches(), 2);
  for (int64_t epoch : {0, 1}) {
    auto w = whole.epoch(epoch);
    std::vector<DataLoader::Epoch> passes;
    for (auto& s : shards) passes.push_back(s.epoch(epoch));
    for (int64_t k = 0; k < 2; ++k) {
      auto expected = w.next()->at("y").to_vector<int64_t>();
      std::vector<int64_t> got;
      for (auto& p : passes)
        for (int64_t y : p.next()->at("y").to_vector<int64_t>()) got.push_back(y);
      std::sort(expected.begin(), expected.end());
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, expected) << "epoch " << epoch << " batch " << k;
    }
  }
  // 10 samples over 4 shards: 3 each, the first two samples of the order repeated.
  auto ten = std::make_shared<ToyDataset>(10);
  std::vector<int64_t> all;
  for (int r = 0; r < 4; ++r) {
    DataLoader s(ten, {.batch_size = 2, .shard = r, .num_shards = 4});
    EXPECT_EQ(s.num_batches(), 2);
    auto idx = s.indices(0);
    EXPECT_EQ(idx.size(), 3u);
    all.insert(all.end(), idx.begin(), idx.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int64_t>{0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  DataLoader bad(ten, {.batch_size = 2});
  EXPECT_THROW(bad.set_shard(4, 4), ValueError);
  EXPECT_THROW(DataLoader(ten, {.batch_size = 2, .shard = -1, .num_shards = 2}), ValueError);
}

TEST(DataLoaderTest, ShuffleIsSeededEpochDependentAndWorkerIndependent) {
  auto ds = std::make_shared<ToyDataset>(37);
  DataLoader a(ds, {.batch_size = 5, .shuffle = true, .seed = 7});
  DataLoader b(ds, {.batch_size = 5, .shuffle = true, .seed = 7, .num_workers = 3, .prefetch = 1});
  DataLoader c(ds, {.batch_size = 5, .shuffle = true, .seed = 8, .num_workers = 3});
  auto e0 = run_epoch(a, 0);
  EXPECT_EQ(e0, run_epoch(b, 0));   // same seed: same data with 0 or 3 workers
  EXPECT_EQ(e0, run_epoch(a, 0));   // and reproducible
  EXPECT_NE(e0, run_epoch(a, 1));   // another epoch: another order
  EXPECT_NE(e0, run_epoch(c, 0));   // another seed: another order
  EXPECT_EQ(run_epoch(a, 1), run_epoch(b, 1));
  // Every sample appears exactly once.
  std::vector<int64_t> idx = a.indices(0);
  std::sort(idx.begin(), idx.end());
  for (int64_t i = 0; i < 37; ++i) EXPECT_EQ(idx[size_t(i)], i);
  EXPECT_NE(a.indices(0), a.indices(1));
  // Without shuffle the order is the identity.
  DataLoader plain(ds, {.batch_size = 5, .num_workers = 3});
  auto p = run_epoch(plain, 0);
  ASSERT_EQ(p.size(), 8u);
  EXPECT_EQ(p[0][0], 0.f);
  EXPECT_EQ(p[7][0], 35.f);
}

TEST(DataLoaderTest, WorkerErrorIsRethrownWithSampleIndex) {
  for (int workers : {0, 3}) {
    auto ds = std::make_shared<ToyDataset>(20, /*fail_at=*/13);
    DataLoader dl(ds, {.batch_size = 4, .num_workers = workers});
    auto ep = dl.epoch(0);
    int ok = 0;
    try {
      while (ep.next()) ++ok;
      ADD_FAILURE() << "no error";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find("record 13"), std::string::npos);
      EXPECT_NE(e.full_message().find("sample 13"), std::string::npos) << e.full_message();
    }
    EXPECT_EQ(ok, 3) << "workers " << workers;  // batches 0..2 come first, in order
    EXPECT_FALSE(ep.next());
  }
}

TEST(DataLoaderTest, CustomCollateAndMismatchedShapes) {
  auto ds = std::make_shared<ToyDataset>(6);
  DataLoader dl(ds, {.batch_size = 3, .collate = [](std::vector<Example>& ex) {
                       return Example{{"n", scalar_tensor(double(ex.size()), DType::Int64)}};
                     }});
  for (Example& b : dl.epoch(0)) EXPECT_EQ(b.at("n").item<int64_t>(), 3);

  std::vector<Example> bad = {{{"img", zeros(Shape{2, 2})}}, {{"img", zeros(Shape{3, 2})}}};
  try {
    default_collate(bad);
    ADD_FAILURE();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("'img'"), std::string::npos) << e.what();
  }
}

TEST(DataLoaderTest, EarlyStopJoinsWorkers) {
  auto ds = std::make_shared<ToyDataset>(200);
  DataLoader dl(ds, {.batch_size = 2, .num_workers = 3, .prefetch = 2});
  {
    auto ep = dl.epoch(0);
    ASSERT_TRUE(ep.next());
  }  // destroyed with most batches pending: must not hang
  SUCCEED();
}

TEST(DataLoaderTest, TensorAndMapDatasets) {
  auto base = std::make_shared<TensorDataset>(
      Example{{"a", reshape(arange(0.0, 12.0, 1.0, DType::Float32), Shape{6, 2})}, {"b", arange(6)}});
  EXPECT_EQ(base->size(), 6);
  EXPECT_EQ(base->get(2).at("a").to_vector<float>(), (std::vector<float>{4, 5}));
  EXPECT_THROW(base->get(6), IndexError);
  EXPECT_THROW(TensorDataset(Example{{"a", zeros(Shape{3})}, {"b", zeros(Shape{4})}}), ShapeError);
  auto mapped = std::make_shared<MapDataset>(base, [](Example e, Generator& g) {
    e["r"] = scalar_tensor(g.uniform());
    return e;
  });
  DataLoader d0(mapped, {.batch_size = 4, .shuffle = true, .seed = 3});
  DataLoader d3(mapped, {.batch_size = 4, .shuffle = true, .seed = 3, .num_workers = 3});
  auto x = d0.epoch(2).next()->at("r").to_vector<float>();
  EXPECT_EQ(x, d3.epoch(2).next()->at("r").to_vector<float>());
  EXPECT_NE(x, d0.epoch(3).next()->at("r").to_vector<float>());
}

}  // namespace
}  // namespace skiff::data
