#include "framework/tensor/storage.h"

#include "framework/core/error.h"
#include "framework/tensor/cpu_allocator.h"

namespace skiff {

std::shared_ptr<Storage> Storage::allocate(int64_t nbytes, Device device) {
  SKIFF_CHECK(nbytes >= 0, "allocate: negative size {}", nbytes);
  SKIFF_CHECK_T(NotImplementedError, device.type == DeviceType::CPU,
                "allocate: device {} has no allocator in this build", device.str());
  uintptr_t handle = 0;
  void* p = detail::cpu_allocate(size_t(nbytes), &handle);
  return std::make_shared<Storage>(p, nbytes, device, [handle](void* q) { detail::cpu_release(q, handle); });
}

}  // namespace skiff
