#include "framework/tensor/storage.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "framework/core/error.h"
#include "framework/tensor/cpu_allocator.h"

namespace skiff {

namespace {

int64_t default_max_tensor_bytes() {
  if (const char* env = std::getenv("SKIFF_MAX_TENSOR_BYTES"); env && *env) {
    char* end = nullptr;
    long long v = std::strtoll(env, &end, 10);
    SKIFF_CHECK(end && *end == '\0' && v > 0, "SKIFF_MAX_TENSOR_BYTES: expected a positive number of bytes, got '{}'",
                env);
    return v;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : INT64_MAX;
}

std::atomic<int64_t>& max_bytes() {
  static std::atomic<int64_t> limit{default_max_tensor_bytes()};
  return limit;
}

}  // namespace

int64_t max_tensor_bytes() { return max_bytes().load(std::memory_order_relaxed); }

void set_max_tensor_bytes(int64_t nbytes) {
  SKIFF_CHECK(nbytes > 0, "set_max_tensor_bytes: expected a positive size, got {}", nbytes);
  max_bytes().store(nbytes, std::memory_order_relaxed);
}

std::shared_ptr<Storage> Storage::allocate(int64_t nbytes, Device device) {
  SKIFF_CHECK(nbytes >= 0, "allocate: negative size {}", nbytes);
  SKIFF_CHECK_T(DeviceError, nbytes <= max_tensor_bytes(),
                "allocate: a tensor of {} bytes is larger than the limit of {} bytes (SKIFF_MAX_TENSOR_BYTES; "
                "by default the machine's memory)", nbytes, max_tensor_bytes());
  SKIFF_CHECK_T(NotImplementedError, device.type == DeviceType::CPU,
                "allocate: device {} has no allocator in this build", device.str());
  uintptr_t handle = 0;
  void* p = detail::cpu_allocate(size_t(nbytes), &handle);
  return std::make_shared<Storage>(p, nbytes, device, [handle](void* q) { detail::cpu_release(q, handle); });
}

}  // namespace skiff
