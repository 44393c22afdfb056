#include "framework/tensor/storage.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "framework/core/error.h"

namespace skiff {
namespace {

constexpr size_t kAlign = 64;
// Cached blocks above this total are released to the system instead of kept.
constexpr int64_t kMaxCachedBytes = int64_t(2) << 30;

// Rounds sizes into buckets so slightly different requests reuse the same
// blocks: 64-byte steps below 64 KiB, then 1/8 power-of-two steps.
size_t bucket_size(size_t n) {
  if (n <= 65536) return (n + kAlign - 1) / kAlign * kAlign;
  size_t p = size_t(1) << (63 - __builtin_clzll(n));
  size_t step = p / 8;
  return (n + step - 1) / step * step;
}

class CpuCachingAllocator {
 public:
  void* allocate(size_t nbytes, size_t* bucket) {
    *bucket = bucket_size(std::max<size_t>(nbytes, 1));
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Best fit among cached blocks up to 1.5x the request: images of varying size
      // then reuse each other's buffers instead of faulting in fresh pages.
      for (auto it = free_.lower_bound(*bucket); it != free_.end() && it->first <= *bucket + *bucket / 2; ++it) {
        if (it->second.empty()) continue;
        void* p = it->second.back();
        it->second.pop_back();
        *bucket = it->first;
        stats_.cached_bytes -= int64_t(*bucket);
        stats_.allocated_bytes += int64_t(*bucket);
        return p;
      }
      stats_.num_system_allocs++;
      stats_.allocated_bytes += int64_t(*bucket);
    }
    void* p = std::aligned_alloc(kAlign, *bucket);
    if (!p) {
      cpu_allocator_empty_cache();
      p = std::aligned_alloc(kAlign, *bucket);
    }
    if (!p) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.allocated_bytes -= int64_t(*bucket);
      SKIFF_THROW(DeviceError, "cpu allocator: out of memory allocating {} bytes", nbytes);
    }
    return p;
  }
  void release(void* p, size_t bucket) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.allocated_bytes -= int64_t(bucket);
    if (stats_.cached_bytes + int64_t(bucket) > kMaxCachedBytes) {
      std::free(p);
      return;
    }
    free_[bucket].push_back(p);
    stats_.cached_bytes += int64_t(bucket);
  }
  void empty() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    stats_.cached_bytes = 0;
  }
  AllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  AllocatorStats stats_;
};

CpuCachingAllocator& cpu_allocator() {
  // Leaked on purpose: storages may be destroyed during static destruction.
  static auto* a = new CpuCachingAllocator();
  return *a;
}

}  // namespace

std::shared_ptr<Storage> Storage::allocate(int64_t nbytes, Device device) {
  SKIFF_CHECK(nbytes >= 0, "allocate: negative size {}", nbytes);
  SKIFF_CHECK_T(NotImplementedError, device.type == DeviceType::CPU,
                "allocate: device {} has no allocator in this build", device.str());
  size_t bucket = 0;
  void* p = cpu_allocator().allocate(size_t(nbytes), &bucket);
  return std::make_shared<Storage>(p, nbytes, device, [bucket](void* q) { cpu_allocator().release(q, bucket); });
}

AllocatorStats cpu_allocator_stats() { return cpu_allocator().stats(); }
void cpu_allocator_empty_cache() { cpu_allocator().empty(); }

}  // namespace skiff
