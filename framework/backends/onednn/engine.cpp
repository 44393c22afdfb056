#include "framework/backends/onednn/engine.h"

#include <cstdlib>

#include "framework/core/error.h"

namespace skiff::onednn {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine = [] {
    if (!std::getenv("DNNL_JIT_PROFILE")) dnnl::set_jit_profiling_flags(0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

void Workspace::Free::operator()(void* p) const { std::free(p); }

void* Workspace::get(Slot slot, size_t bytes) {
  Buffer& b = buffers_[slot];
  if (b.size < bytes || !b.data) {
    const size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
    b.data.reset();  // before the new allocation: the old buffer's memory can be reused
    b.size = 0;
    b.data.reset(std::aligned_alloc(64, rounded));
    SKIFF_CHECK_T(DeviceError, b.data != nullptr, "onednn workspace: out of memory allocating {} bytes", rounded);
    b.size = rounded;
  }
  return b.data.get();
}

Workspace& thread_workspace() {
  thread_local Workspace ws;
  return ws;
}

}  // namespace skiff::onednn
