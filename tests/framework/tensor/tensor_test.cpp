#include "framework/tensor/tensor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

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

TEST(TensorTest, TensorsPastTheSizeLimitAreRefusedNamingIt) {
  const int64_t saved = max_tensor_bytes();
  set_max_tensor_bytes(1 << 20);
  try {
    (void)skiff::empty(Shape{1024, 1024});  // 4 MiB
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the limit of 1048576 bytes (SKIFF_MAX_TENSOR_BYTES"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(skiff::empty(Shape{512, 512}).nbytes(), 1 << 20);
  set_max_tensor_bytes(saved);
  // A shape whose byte count does not fit in int64 (a corrupt model's initializer).
  EXPECT_THROW((void)skiff::empty(Shape{int64_t(1) << 40, int64_t(1) << 40}), DeviceError);
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

// Small blocks are cached by size bucket; a cached block up to 1.5x the request is reused.
TEST(TensorTest, CachingAllocatorReusesSomewhatLargerSmallBlocks) {
  cpu_allocator_empty_cache();
  void* big = nullptr;
  { Tensor t = empty({1 << 16}); big = t.data_ptr(); }  // 256 KiB (the largest small block), now cached
  auto before = cpu_allocator_stats().num_system_allocs;
  {
    Tensor smaller = empty({(1 << 16) * 3 / 4});  // 192 KiB: fits the cached block
    EXPECT_EQ(smaller.data_ptr(), big);
    EXPECT_EQ(cpu_allocator_stats().num_system_allocs, before);
  }
  Tensor much_smaller = empty({(1 << 16) / 2});  // 128 KiB: would waste half the block
  EXPECT_NE(much_smaller.data_ptr(), big);
  EXPECT_EQ(cpu_allocator_stats().num_system_allocs, before + 1);
}

// Large blocks are carved from a segment and merged again when freed, so requests of
// different sizes share memory: a freed 4 MiB block serves 2 MiB + 2 MiB, and two freed
// neighbours serve one request of their combined size.
TEST(TensorTest, CachingAllocatorCarvesAndMergesLargeBlocks) {
  cpu_allocator_empty_cache();
  constexpr int64_t MiB = int64_t(1) << 18;  // float32 elements per MiB
  char* base = nullptr;
  { Tensor a = empty({4 * MiB}); base = static_cast<char*>(a.data_ptr()); }
  const auto before = cpu_allocator_stats();
  {
    Tensor b = empty({2 * MiB}), c = empty({2 * MiB});
    EXPECT_EQ(b.data_ptr(), base);
    EXPECT_EQ(c.data_ptr(), base + (2 << 20));
    Tensor d = empty({6 * MiB});
    EXPECT_EQ(d.data_ptr(), base + (4 << 20));
  }
  Tensor merged = empty({10 * MiB});  // b, c and d merged back into one free run
  EXPECT_EQ(merged.data_ptr(), base);
  const auto after = cpu_allocator_stats();
  EXPECT_EQ(after.num_system_allocs, before.num_system_allocs);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(after.allocated_bytes + after.cached_bytes, after.reserved_bytes);
}

// The pattern of `skiff ocr` over a folder: every image needs activations of its own
// sizes. The memory held stays one segment while the live bytes fit in one; exact-size
// caching held every size ever seen (3.8x the live peak over 40 images).
TEST(TensorTest, CachingAllocatorHoldsNearTheLivePeakAcrossVaryingSizes) {
  cpu_allocator_empty_cache();
  const int64_t reserved_before = cpu_allocator_stats().reserved_bytes;
  Generator gen(3);
  std::vector<int64_t> sizes = randint(1 << 18, 3 << 20, {40 * 6}, DType::Int64, &gen).to_vector<int64_t>();  // 1 to 12 MiB
  for (int64_t image = 0; image < 40; ++image) {
    std::vector<Tensor> live;
    for (int64_t k = 0; k < 6; ++k) {
      live.push_back(empty({sizes[size_t(image * 6 + k)]}));
      if (live.size() > 3) live.erase(live.begin());  // at most 3 alive: <= 36 MiB
    }
  }
  const auto stats = cpu_allocator_stats();
  EXPECT_LE(stats.reserved_bytes - reserved_before, (int64_t(64) << 20) + (int64_t(1) << 20));  // + small blocks
  EXPECT_EQ(stats.allocated_bytes + stats.cached_bytes, stats.reserved_bytes);
}

// A hole in memory already used wins over the untouched tail of another segment even
// when the tail fits better: the tail's pages would all fault in afresh.
TEST(TensorTest, CachingAllocatorPrefersMemoryAlreadyTouched) {
  cpu_allocator_empty_cache();
  constexpr int64_t MiB = int64_t(1) << 18;  // float32 elements per MiB
  Tensor hole = empty({40 * MiB});           // a new segment: bytes 0-40 MiB
  Tensor keep = empty({20 * MiB});           // 40-60 MiB of the same segment
  Tensor other = empty({40 * MiB});          // does not fit the 4 MiB left: a second segment
  char* hole_start = static_cast<char*>(hole.data_ptr());
  const int64_t reserved = cpu_allocator_stats().reserved_bytes;
  hole = Tensor();  // frees 40 touched MiB; the second segment's untouched tail is 24 MiB
  Tensor next = empty({20 * MiB});
  EXPECT_EQ(next.data_ptr(), hole_start);
  EXPECT_EQ(cpu_allocator_stats().reserved_bytes, reserved);
}

// A request larger than a segment gets a segment of its own, returned by empty_cache.
TEST(TensorTest, CachingAllocatorGivesOversizedSegmentsBack) {
  cpu_allocator_empty_cache();
  const int64_t before = cpu_allocator_stats().reserved_bytes;
  { Tensor huge = empty({int64_t(100) << 18}); }  // 100 MiB
  EXPECT_GE(cpu_allocator_stats().reserved_bytes - before, int64_t(100) << 20);
  cpu_allocator_empty_cache();
  EXPECT_EQ(cpu_allocator_stats().reserved_bytes, before);
}

#if defined(__SANITIZE_ADDRESS__)
// Cached blocks stay mapped, so without poisoning a read through a dangling tensor pointer
// would go unnoticed in the sanitizer build.
TEST(TensorTest, CachedMemoryIsPoisonedUnderAsan) {
  for (int64_t n : {int64_t(1000), int64_t(1) << 20}) {  // a small and a large (carved) block
    float* p = nullptr;
    { Tensor t = empty({n}); p = static_cast<float*>(t.data_ptr()); }
    EXPECT_DEATH({ volatile float v = p[n / 2]; (void)v; }, "use-after-poison") << n;
  }
}
#endif

// Threads allocating and freeing large blocks at once each keep their own bytes.
TEST(TensorTest, CachingAllocatorIsThreadSafe) {
  std::vector<std::thread> threads;
  std::atomic<int> corrupted{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &corrupted] {
      for (int i = 0; i < 50; ++i) {
        Tensor x = full({int64_t((1 + (i + t) % 5) << 18)}, double(t * 100 + i), DType::Float32);
        if (amin(x).item<float>() != float(t * 100 + i) || amax(x).item<float>() != float(t * 100 + i)) ++corrupted;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(corrupted.load(), 0);
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
