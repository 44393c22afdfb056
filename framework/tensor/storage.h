#pragma once
/// \file storage.h
/// A block of device memory shared by a tensor and all of its views.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "framework/core/device.h"

namespace skiff {

/// Owns (or borrows) `nbytes` bytes on `device`. The version counter is bumped by
/// every in-place write so autograd can detect saved tensors that were modified.
class Storage {
 public:
  using Deleter = std::function<void(void*)>;
  Storage(void* data, int64_t nbytes, Device device, Deleter deleter)
      : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}
  ~Storage() { if (deleter_) deleter_(data_); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// Allocates from the device's caching allocator (64-byte aligned on the CPU).
  /// \throws DeviceError naming both sizes when `nbytes` exceeds max_tensor_bytes().
  static std::shared_ptr<Storage> allocate(int64_t nbytes, Device device);

  void* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  int64_t nbytes_;
  Device device_;
  Deleter deleter_;
  std::atomic<uint32_t> version_{0};
};

/// The largest single tensor Storage::allocate accepts, in bytes: the environment variable
/// SKIFF_MAX_TENSOR_BYTES when set, else the machine's physical memory. A request above it
/// (a corrupt model declaring a [1e9, 1e9] weight, a shape op gone wild) fails with an error
/// naming the limit instead of the process being killed for memory.
int64_t max_tensor_bytes();
/// Overrides the limit for this process (the fuzzers use a few hundred MiB).
void set_max_tensor_bytes(int64_t nbytes);

/// CPU caching allocator statistics (for `skiff info` and tests).
/// (framework/tensor/cpu_allocator.h explains how it works.)
struct AllocatorStats {
  int64_t allocated_bytes = 0;   ///< bytes currently handed out
  int64_t cached_bytes = 0;      ///< bytes held free for reuse (including untouched segment tails)
  int64_t reserved_bytes = 0;    ///< bytes obtained from the system and not given back
  int64_t num_system_allocs = 0; ///< calls that reached the system allocator
};
AllocatorStats cpu_allocator_stats();
/// Returns cached small blocks and entirely free segments to the system.
void cpu_allocator_empty_cache();

}  // namespace skiff
