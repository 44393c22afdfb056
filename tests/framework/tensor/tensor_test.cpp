#include "framework/tensor/tensor.h"

#include <gtest/gtest.h>

#include "framework/core/rng.h"
#include "framework/ops/ops.h"

namespace skiff {

TEST(TensorTest, FactoriesFillValues) {
  EXPECT_EQ(zeros({2, 3}).to_vector<float>(), std::vector<float>(6, 0.f));
  EXPECT_EQ(full({2}, 7.5, DType::Float64).to_vector<double>(), (std::vector<double>{7.5, 7.5}));
  EXPECT_EQ(arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(1.0, 2.0, 0.25, DType::Float32).to_vector<float>(), (std::vector<float>{1, 1.25, 1.5, 1.75}));
  auto ls = linspace(0, 1, 5).to_vector<float>();
  EXPECT_EQ(ls.front(), 0.f);
  EXPECT_EQ(ls.back(), 1.f);
  EXPECT_FLOAT_EQ(ls[2], 0.5f);
  EXPECT_EQ(eye(2, 3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
}

TEST(TensorTest, AllocationsAre64ByteAligned) {
  for (int64_t n : {1, 3, 17, 1000, 100000}) {
    Tensor t = empty({n}, DType::UInt8);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u) << n;
  }
}

TEST(TensorTest, CachingAllocatorReusesFreedBlocks) {
  { Tensor warm = empty({12345}); }
  auto before = cpu_allocator_stats().num_system_allocs;
  for (int i = 0; i < 10; ++i) Tensor t = empty({12345});
  EXPECT_EQ(cpu_allocator_stats().num_system_allocs, before);
}

// Images of varying size ask for slightly different buffer sizes each time: a
// cached block up to 1.5x the request is reused instead of a fresh allocation.
TEST(TensorTest, CachingAllocatorReusesSomewhatLargerBlocks) {
  cpu_allocator_empty_cache();
  void* big = nullptr;
  { Tensor t = empty({1 << 20}); big = t.data_ptr(); }  // 4 MiB, now cached
  auto before = cpu_allocator_stats().num_system_allocs;
  {
    Tensor smaller = empty({(1 << 20) * 3 / 4});  // 3 MiB: fits the cached 4 MiB block
    EXPECT_EQ(smaller.data_ptr(), big);
    EXPECT_EQ(cpu_allocator_stats().num_system_allocs, before);
  }
  Tensor much_smaller = empty({(1 << 20) / 2});  // 2 MiB: would waste half the block
  EXPECT_NE(much_smaller.data_ptr(), big);
  EXPECT_EQ(cpu_allocator_stats().num_system_allocs, before + 1);
}

TEST(TensorTest, SameSeedSameNumbers) {
  manual_seed(42);
  auto a = randn({100}).to_vector<float>();
  auto i1 = randint(0, 10, {50}).to_vector<int64_t>();
  manual_seed(42);
  EXPECT_EQ(randn({100}).to_vector<float>(), a);
  EXPECT_EQ(randint(0, 10, {50}).to_vector<int64_t>(), i1);
  for (int64_t v : i1) EXPECT_TRUE(v >= 0 && v < 10);
  auto u = rand({1000}, DType::Float64).to_vector<double>();
  for (double v : u) EXPECT_TRUE(v >= 0 && v < 1);
  auto p = randperm(10).to_vector<int64_t>();
  std::sort(p.begin(), p.end());
  EXPECT_EQ(p, arange(10).to_vector<int64_t>());
}

TEST(TensorTest, ItemAndCastsBetweenAllDtypes) {
  Tensor t = from_vector<float>({1.5f, -2.25f, 3.0f});
  for (int i = 0; i < kNumDTypes; ++i) {
    Tensor c = to(t, DType(i));
    EXPECT_EQ(c.dtype(), DType(i));
    if (DType(i) == DType::Bool) {
      EXPECT_EQ(c.to_vector<bool>()[0], true);
    } else if (is_integral(DType(i))) {
      EXPECT_EQ(c.to_vector<int64_t>()[2], 3);
    } else {
      EXPECT_DOUBLE_EQ(to(c, DType::Float64).to_vector<double>()[1], -2.25) << dtype_name(DType(i));
    }
  }
  EXPECT_EQ(scalar_tensor(3.0).item<int>(), 3);
  EXPECT_THROW(t.item<float>(), ValueError);
  EXPECT_THROW(t.data<double>(), TypeError);
}

TEST(TensorTest, FromBlobSharesMemoryAndRunsDeleter) {
  bool deleted = false;
  std::vector<float> buf{1, 2, 3, 4};
  {
    Tensor t = from_blob(buf.data(), {2, 2}, DType::Float32, [&](void*) { deleted = true; });
    buf[3] = 9;
    EXPECT_EQ(t.to_vector<float>()[3], 9.f);
  }
  EXPECT_TRUE(deleted);
}

TEST(TensorTest, PrintingShowsValuesShapeAndDtype) {
  std::string s = from_vector<int64_t>({1, 2, 3, 4}, {2, 2}).str();
  EXPECT_NE(s.find("[[1, 2],"), std::string::npos) << s;
  EXPECT_NE(s.find("shape=[2, 2]"), std::string::npos);
  EXPECT_NE(s.find("int64"), std::string::npos);
  std::string big = zeros({2000}).str();
  EXPECT_NE(big.find("..."), std::string::npos);
  EXPECT_EQ(Tensor().str(), "Tensor(undefined)");
}

TEST(TensorTest, NegativeShapeIsAnError) { EXPECT_THROW(empty({2, -1}), ShapeError); }

}  // namespace skiff
